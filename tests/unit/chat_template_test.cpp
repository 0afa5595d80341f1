// Chat templates against llama.cpp's built-in ones: the expected texts are what llama.cpp
// b7293's llama_chat_apply_template writes for the same conversation and template name.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "engine/chat.h"
#include "engine/error.h"
#include "engine/session.h"
#include "test_models.h"

using namespace engine;

namespace {

// A system message, a user message with surrounding whitespace (kept or trimmed by template),
// an assistant reply with a trailing space, and a second user message.
const std::vector<ChatMessage> kConversation = {
    {"system", "You are terse."}, {"user", " Hi there \n"}, {"assistant", "Hello! "}, {"user", "Name a colour."}};

}  // namespace

TEST(ChatTemplate, WritesWhatLlamaCppWrites) {
  struct Case {
    const char* name;
    bool add_assistant;
    const char* expected;
  };
  const Case cases[] = {
      {"chatml", false, "<|im_start|>system\nYou are terse.<|im_end|>\n<|im_start|>user\n Hi there \n<|im_end|>\n<|im_start|>assistant\nHello! <|im_end|>\n<|im_start|>user\nName a colour.<|im_end|>\n"},
      {"chatml", true, "<|im_start|>system\nYou are terse.<|im_end|>\n<|im_start|>user\n Hi there \n<|im_end|>\n<|im_start|>assistant\nHello! <|im_end|>\n<|im_start|>user\nName a colour.<|im_end|>\n<|im_start|>assistant\n"},
      {"llama2", false, "[INST] You are terse.\n Hi there \n [/INST]Hello! </s>[INST] Name a colour. [/INST]"},
      {"llama2", true, "[INST] You are terse.\n Hi there \n [/INST]Hello! </s>[INST] Name a colour. [/INST]"},
      {"llama2-sys", false, "[INST] <<SYS>>\nYou are terse.\n<</SYS>>\n\n Hi there \n [/INST]Hello! </s>[INST] Name a colour. [/INST]"},
      {"llama2-sys", true, "[INST] <<SYS>>\nYou are terse.\n<</SYS>>\n\n Hi there \n [/INST]Hello! </s>[INST] Name a colour. [/INST]"},
      {"mistral-v7", false, "[SYSTEM_PROMPT] You are terse.[/SYSTEM_PROMPT][INST]  Hi there \n[/INST] Hello! </s>[INST] Name a colour.[/INST]"},
      {"mistral-v7", true, "[SYSTEM_PROMPT] You are terse.[/SYSTEM_PROMPT][INST]  Hi there \n[/INST] Hello! </s>[INST] Name a colour.[/INST]"},
      {"llama3", false, "<|start_header_id|>system<|end_header_id|>\n\nYou are terse.<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nHi there<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\nHello!<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nName a colour.<|eot_id|>"},
      {"llama3", true, "<|start_header_id|>system<|end_header_id|>\n\nYou are terse.<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nHi there<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\nHello!<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nName a colour.<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n"},
      {"phi3", false, "<|system|>\nYou are terse.<|end|>\n<|user|>\n Hi there \n<|end|>\n<|assistant|>\nHello! <|end|>\n<|user|>\nName a colour.<|end|>\n"},
      {"phi3", true, "<|system|>\nYou are terse.<|end|>\n<|user|>\n Hi there \n<|end|>\n<|assistant|>\nHello! <|end|>\n<|user|>\nName a colour.<|end|>\n<|assistant|>\n"},
      {"gemma", false, "<start_of_turn>user\nYou are terse.\n\nHi there<end_of_turn>\n<start_of_turn>model\nHello!<end_of_turn>\n<start_of_turn>user\nName a colour.<end_of_turn>\n"},
      {"gemma", true, "<start_of_turn>user\nYou are terse.\n\nHi there<end_of_turn>\n<start_of_turn>model\nHello!<end_of_turn>\n<start_of_turn>user\nName a colour.<end_of_turn>\n<start_of_turn>model\n"},
  };
  for (const Case& c : cases)
    EXPECT_EQ(apply_chat_template(chat_template_named(c.name), kConversation, c.add_assistant), c.expected)
        << c.name << (c.add_assistant ? " with the assistant's turn" : "");
}

// Each family's Jinja template is recognized by the marks llama.cpp looks for.
TEST(ChatTemplate, DetectsEachFamilyFromItsJinja) {
  const std::pair<const char*, ChatTemplate> cases[] = {
      {"{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}", ChatTemplate::kChatML},
      {"{{'<|im_start|>' + message['role'] + '<|im_sep|>' + message['content'] + '<|im_end|>'}}", ChatTemplate::kPhi4},
      {"{{ bos_token }}{% if message['role'] == 'user' %}{{ '[INST] ' + message['content'] + ' [/INST]' }}", ChatTemplate::kLlama2},
      {"{% if loop.index0 == 0 %}{{ '<<SYS>>\\n' + system_message + '\\n<</SYS>>\\n\\n' }}{{ '[INST] ' }}", ChatTemplate::kLlama2Sys},
      {"{{- '[SYSTEM_PROMPT]' + system_message + '[/SYSTEM_PROMPT]' }}{{- '[INST]' + message['content'] + '[/INST]' }}", ChatTemplate::kMistralV7},
      {"{{ '<|' + message['role'] + '|>' + '\n' + message['content'] + '<|end|>\n' }}{{ '<|assistant|>\n' }}", ChatTemplate::kPhi3},
      {"{{ '<start_of_turn>' + role + '\n' + (first_user_prefix if loop.first else '') }}", ChatTemplate::kGemma},
      {"{{- '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n' + message['content'] | trim + '<|eot_id|>' }}", ChatTemplate::kLlama3},
  };
  for (const auto& [jinja, expected] : cases) {
    const auto detected = detect_chat_template(jinja);
    ASSERT_TRUE(detected.has_value()) << jinja;
    EXPECT_EQ(*detected, expected) << jinja;
  }
  EXPECT_FALSE(detect_chat_template("{{ messages | tojson }}").has_value());
  EXPECT_FALSE(detect_chat_template("{{ ' [INST] ' + system_message }}").has_value()) << "Mistral v1: not built in";
  EXPECT_THROW(chat_template_named("vicuna"), Error);
}

// A second user turn feeds the session only the text after its first reply, and leaves it
// where a fresh session given the whole conversation at once is: the same positions, the
// same next-token logits.
TEST(Conversation, FeedsOnlyWhatTheTemplateAdds) {
  const std::string path = test_models::synthetic_qwen2_model();
  SessionParams params;
  params.n_ctx = 256;
  params.n_threads = 2;
  params.kv_type = DType::F32;
  auto session = Session::create(path, params);
  Conversation chat(*session, ChatTemplate::kChatML, "You are terse.");
  chat.user("Once upon a time");
  const int64_t after_first_turn = session->n_past();
  const std::string reply = "there was a dog";
  for (int32_t id : session->tokenizer().encode(reply, false)) session->decode(id);
  chat.assistant(reply);
  const std::span<const float> turn = chat.user("The little dog");
  const std::vector<float> logits(turn.begin(), turn.end());
  const std::string whole = apply_chat_template(ChatTemplate::kChatML, chat.messages(), true);
  const std::vector<int32_t> all = session->tokenizer().encode(whole, false, true);
  EXPECT_EQ(session->n_past(), static_cast<int64_t>(all.size()));
  EXPECT_GT(after_first_turn, 0);

  auto fresh = Session::create(path, params);
  const std::span<const float> expected = fresh->prefill(all);
  ASSERT_EQ(logits.size(), expected.size());
  double worst = 0;
  for (size_t i = 0; i < logits.size(); ++i) worst = std::max(worst, double(std::fabs(logits[i] - expected[i])));
  EXPECT_LT(worst, 1e-3);
  EXPECT_EQ(std::max_element(logits.begin(), logits.end()) - logits.begin(),
            std::max_element(expected.begin(), expected.end()) - expected.begin());
}
