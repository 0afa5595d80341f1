#include "engine/chat.h"

#include <array>
#include <utility>

#include "engine/error.h"
#include "engine/gguf.h"
#include "engine/session.h"

namespace engine {
namespace {

constexpr std::array<std::pair<std::string_view, ChatTemplate>, 8> kNames{{
    {"chatml", ChatTemplate::kChatML},
    {"llama2", ChatTemplate::kLlama2},
    {"llama2-sys", ChatTemplate::kLlama2Sys},
    {"mistral-v7", ChatTemplate::kMistralV7},
    {"llama3", ChatTemplate::kLlama3},
    {"phi3", ChatTemplate::kPhi3},
    {"phi4", ChatTemplate::kPhi4},
    {"gemma", ChatTemplate::kGemma},
}};

// Leading and trailing ASCII whitespace removed, as the templates that trim messages do.
std::string trim(std::string_view s) {
  const auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return std::string(s);
}

// Llama 2 and Mistral v7 carry the system message inside the instruction and end the user's
// turn with [/INST], so the assistant's turn needs no opening.
std::string instruct(ChatTemplate t, const std::vector<ChatMessage>& messages) {
  std::string out;
  if (t == ChatTemplate::kMistralV7) {
    for (const ChatMessage& m : messages) {
      if (m.role == "system")
        out += "[SYSTEM_PROMPT] " + m.content + "[/SYSTEM_PROMPT]";
      else if (m.role == "user")
        out += "[INST] " + m.content + "[/INST]";
      else
        out += " " + m.content + "</s>";
    }
    return out;
  }
  bool inside_turn = true;  // the first [INST] is written here, BOS by the tokenizer
  out = "[INST] ";
  for (const ChatMessage& m : messages) {
    if (!inside_turn) {
      inside_turn = true;
      out += "[INST] ";
    }
    if (m.role == "system")
      out += t == ChatTemplate::kLlama2Sys ? "<<SYS>>\n" + m.content + "\n<</SYS>>\n\n" : m.content + "\n";
    else if (m.role == "user")
      out += m.content + " [/INST]";
    else {
      out += m.content + "</s>";
      inside_turn = false;
    }
  }
  return out;
}

}  // namespace

std::string chat_template_names() {
  std::string names;
  for (const auto& [name, t] : kNames) names += (names.empty() ? "" : ", ") + std::string(name);
  return names;
}

ChatTemplate chat_template_named(std::string_view name) {
  for (const auto& [n, t] : kNames)
    if (n == name) return t;
  throw Error("unknown chat template '" + std::string(name) + "' (known: " + chat_template_names() + ")");
}

std::optional<ChatTemplate> detect_chat_template(std::string_view jinja) {
  const auto has = [&](std::string_view mark) { return jinja.find(mark) != std::string_view::npos; };
  if (has("<|im_start|>")) {
    if (has("<end_of_utterance>")) return std::nullopt;  // SmolVLM: not ChatML
    return has("<|im_sep|>") ? ChatTemplate::kPhi4 : ChatTemplate::kChatML;
  }
  if (jinja.starts_with("mistral") || has("[INST]")) {
    if (has("[SYSTEM_PROMPT]")) return ChatTemplate::kMistralV7;
    // Mistral v1 and v3, and Llama 2's BOS-in-history and stripping variants: not built in
    if (has("' [INST] ' + system_message") || has("[AVAILABLE_TOOLS]") || has("bos_token + '[INST]") ||
        has("content.strip()"))
      return std::nullopt;
    return has("<<SYS>>") ? ChatTemplate::kLlama2Sys : ChatTemplate::kLlama2;
  }
  if (has("<|assistant|>") && has("<|end|>")) return ChatTemplate::kPhi3;
  if (has("<start_of_turn>")) return ChatTemplate::kGemma;
  if (has("<|start_header_id|>") && has("<|end_header_id|>")) return ChatTemplate::kLlama3;
  return std::nullopt;
}

std::string apply_chat_template(ChatTemplate t, const std::vector<ChatMessage>& messages, bool add_assistant) {
  std::string out;
  switch (t) {
    case ChatTemplate::kLlama2:
    case ChatTemplate::kLlama2Sys:
    case ChatTemplate::kMistralV7: return instruct(t, messages);
    case ChatTemplate::kChatML:
      for (const ChatMessage& m : messages) out += "<|im_start|>" + m.role + "\n" + m.content + "<|im_end|>\n";
      return add_assistant ? out + "<|im_start|>assistant\n" : out;
    case ChatTemplate::kPhi4:
      for (const ChatMessage& m : messages) out += "<|im_start|>" + m.role + "<|im_sep|>" + m.content + "<|im_end|>";
      return add_assistant ? out + "<|im_start|>assistant<|im_sep|>" : out;
    case ChatTemplate::kLlama3:
      for (const ChatMessage& m : messages)
        out += "<|start_header_id|>" + m.role + "<|end_header_id|>\n\n" + trim(m.content) + "<|eot_id|>";
      return add_assistant ? out + "<|start_header_id|>assistant<|end_header_id|>\n\n" : out;
    case ChatTemplate::kPhi3:
      for (const ChatMessage& m : messages) out += "<|" + m.role + "|>\n" + m.content + "<|end|>\n";
      return add_assistant ? out + "<|assistant|>\n" : out;
    case ChatTemplate::kGemma: {
      std::string system;  // Gemma has no system turn: the system text opens the next user turn
      for (const ChatMessage& m : messages) {
        if (m.role == "system") {
          system += trim(m.content);
          continue;
        }
        const std::string role = m.role == "assistant" ? "model" : m.role;
        out += "<start_of_turn>" + role + "\n";
        if (!system.empty() && role != "model") {
          out += system + "\n\n";
          system.clear();
        }
        out += trim(m.content) + "<end_of_turn>\n";
      }
      return add_assistant ? out + "<start_of_turn>model\n" : out;
    }
  }
  return out;
}

ChatTemplate chat_template_of(const GGUFFile& file) {
  const std::string jinja = file.get_string("tokenizer.chat_template", "");
  if (jinja.empty())
    throw Error(file.path() + " names no chat template (tokenizer.chat_template); name one (" + chat_template_names() + ")");
  if (const auto t = detect_chat_template(jinja)) return *t;
  throw Error(file.path() + ": its chat template is none of those built in; name one (" + chat_template_names() + ")");
}

Conversation::Conversation(Session& session, ChatTemplate t, std::string system) : session_(session), template_(t) {
  if (!system.empty()) messages_.push_back({"system", std::move(system)});
}

std::span<const float> Conversation::user(std::string_view text) {
  messages_.push_back({"user", std::string(text)});
  const std::string all = apply_chat_template(template_, messages_, true);
  if (!all.starts_with(in_cache_) || session_.n_past() == 0) {
    session_.reset();
    in_cache_.clear();
  }
  const Tokenizer& tok = session_.tokenizer();
  const std::vector<int32_t> tokens =
      tok.encode(std::string_view(all).substr(in_cache_.size()), in_cache_.empty() && tok.add_bos_default(), true);
  in_cache_ = all;
  return session_.prefill(tokens);
}

void Conversation::assistant(std::string_view reply) {
  messages_.push_back({"assistant", std::string(reply)});
  in_cache_ += reply;
}

}  // namespace engine
