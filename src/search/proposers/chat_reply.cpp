// See chat_reply.hpp.
#include "search/proposers/chat_reply.hpp"

#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "search/proposers/common.hpp"

namespace kevo {
namespace {

using json = nlohmann::json;

int count(const json& usage, const char* key) {
    const auto it = usage.find(key);
    return it != usage.end() && it->is_number() ? it->get<int>() : 0;
}

void read_usage(const json& j, ChatReply& reply) {
    const auto usage = j.find("usage");
    if (usage == j.end() || !usage->is_object()) return;
    reply.prompt_tokens = count(*usage, "prompt_tokens");
    reply.completion_tokens = count(*usage, "completion_tokens");
}

// choices[0] when the document has one.
const json* first_choice(const json& j) {
    if (!j.is_object()) return nullptr;
    const auto choices = j.find("choices");
    if (choices == j.end() || !choices->is_array() || choices->empty() || !(*choices)[0].is_object()) return nullptr;
    return &(*choices)[0];
}

std::string string_at(const json& object, const char* key) {
    const auto it = object.find(key);
    return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// The text of choices[0][field].content (field: "message", or "delta" in a stream chunk).
std::string content_of(const json& choice, const char* field) {
    const auto m = choice.find(field);
    return m != choice.end() && m->is_object() ? string_at(*m, "content") : std::string();
}

}  // namespace

ChatReply parse_chat_completion(const std::string& body) {
    ChatReply reply;
    const json j = json::parse(body, nullptr, false);
    const json* choice = j.is_discarded() ? nullptr : first_choice(j);
    if (!j.is_discarded() && j.is_object()) read_usage(j, reply);  // counted even when there is no choice
    if (!choice) {
        reply.error = fmt::format("no choices[0] in the reply: {}", tail_one_line(body.substr(0, 200)));
        return reply;
    }
    reply.content = content_of(*choice, "message");
    reply.finish_reason = string_at(*choice, "finish_reason");
    reply.ok = true;
    return reply;
}

ChatReply parse_chat_stream(const std::string& body) {
    ChatReply reply;
    bool done = false, any_chunk = false;
    size_t start = 0;
    while (start < body.size() && !done) {
        size_t end = body.find('\n', start);
        if (end == std::string::npos) end = body.size();
        std::string_view line(body.data() + start, end - start);
        start = end + 1;
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        // Only data lines carry chunks; event:, id:, retry: and ": comments" do not.
        if (line.rfind("data:", 0) != 0) continue;
        line.remove_prefix(5);
        if (!line.empty() && line.front() == ' ') line.remove_prefix(1);
        if (line == "[DONE]") {
            done = true;
            continue;
        }
        const json j = json::parse(line, nullptr, false);
        if (j.is_discarded() || !j.is_object()) {
            reply.error = fmt::format("an event of the stream is not JSON: {}", tail_one_line(line.substr(0, 200)));
            return reply;
        }
        if (j.contains("error")) {
            reply.stream_error = read_server_error(std::string(line));
            reply.error = "the stream carried an error: " + reply.stream_error->message;
            return reply;
        }
        any_chunk = true;
        read_usage(j, reply);  // the final chunk's, where the server sends one
        if (const json* choice = first_choice(j)) {
            reply.content += content_of(*choice, "delta");
            if (const std::string f = string_at(*choice, "finish_reason"); !f.empty()) reply.finish_reason = f;
        }
    }
    if (!any_chunk) {
        reply.error = fmt::format("no data events in the stream: {}", tail_one_line(body.substr(0, 200)));
        return reply;
    }
    reply.ok = true;
    reply.unfinished = !done && reply.finish_reason.empty();
    return reply;
}

}  // namespace kevo
