#pragma once
// Chat templates: how instruction-tuned models of each family lay out a conversation, as
// llama.cpp's built-in templates write them (its names), chosen from the file's
// `tokenizer.chat_template` by the marks each family's Jinja template carries.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace engine {

struct ChatMessage {
  std::string role;  // "system", "user" or "assistant"
  std::string content;
};

enum class ChatTemplate { kChatML, kLlama2, kLlama2Sys, kMistralV7, kLlama3, kPhi3, kPhi4, kGemma };

// "chatml, llama2, ...": the names chat_template_named takes.
std::string chat_template_names();
// The template named `name`; throws Error listing the names when there is none.
ChatTemplate chat_template_named(std::string_view name);
// The template a file's Jinja `tokenizer.chat_template` text is, or nullopt when it is none of them.
std::optional<ChatTemplate> detect_chat_template(std::string_view jinja);
// The conversation as prompt text; with `add_assistant`, followed by the opening of the
// assistant's turn (templates whose user turn already ends there add nothing).
std::string apply_chat_template(ChatTemplate t, const std::vector<ChatMessage>& messages, bool add_assistant);

class GGUFFile;
class Session;

// The template a model file names (its tokenizer.chat_template); throws Error saying so when the
// file names none or one of no built-in family.
ChatTemplate chat_template_of(const GGUFFile& file);

// A conversation over a session: each user turn feeds the session only the text the template
// adds after what its KV cache holds (the close of the last reply, the new turn, the opening of
// the assistant's), so a chat costs what its new tokens cost. Where the template rewrites a past
// turn (Gemma and Llama 3 trim replies), the session starts over from the whole conversation.
class Conversation {
 public:
  Conversation(Session& session, ChatTemplate t, std::string system = {});
  // Feeds the user's turn; returns the logits of the reply's first token.
  std::span<const float> user(std::string_view text);
  // Records the reply generated from those logits: its tokens, decoded, which the session
  // fed itself (all but an ending end-of-turn token, which the next turn's text supplies).
  void assistant(std::string_view reply);
  const std::vector<ChatMessage>& messages() const { return messages_; }

 private:
  Session& session_;
  ChatTemplate template_;
  std::vector<ChatMessage> messages_;
  std::string in_cache_;  // the conversation text the session holds
};

}  // namespace engine
