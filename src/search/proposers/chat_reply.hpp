// Reading an OpenAI-compatible chat-completions reply: a whole JSON document, or (with `stream:
// true`) server-sent events whose chunks carry choices[0].delta.content, ending with [DONE] and,
// where the server sends one, a chunk with the usage.
#pragma once

#include <optional>
#include <string>

#include "search/proposers/failure_class.hpp"

namespace kevo {

struct ChatReply {
    bool ok = false;
    std::string error;           // why the reply could not be read (or the server's error event), when !ok
    std::string content;         // the assistant's text
    std::string finish_reason;   // "stop", "length", ... (empty when the server gave none)
    bool unfinished = false;     // a stream that ended without [DONE] or a finish_reason
    int prompt_tokens = 0, completion_tokens = 0;  // read also from a reply that is not usable otherwise
    std::optional<ServerError> stream_error;  // the error event a stream carried (then !ok)
};

ChatReply parse_chat_completion(const std::string& body);
ChatReply parse_chat_stream(const std::string& body);

}  // namespace kevo
