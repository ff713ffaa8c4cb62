// Telling a failed chat-completions reply's class from its HTTP status and the error body's
// type/code fields (OpenAI's {"error":{"message","type","param","code"}}, which LiteLLM's proxy and
// most compatible servers copy), never from the wording of its message: a request id, a token count
// or a retry history in the text changes nothing.
#pragma once

#include <string>

#include "search/proposer.hpp"

namespace kevo {

// The error a server sent with a failed reply or inside a stream, as far as it can be read.
struct ServerError {
    std::string message;    // error.message (or the start of the body when it is not such a document)
    std::string type;       // error.type: "invalid_request_error", "no_db_connection", ...
    std::string code;       // error.code as text: "context_length_exceeded", or LiteLLM's "400"
    std::string param;      // error.param when it names one
    std::string exception;  // LiteLLM's exception class opening the message ("ContextWindowExceededError")
};

// Reads OpenAI's {"error":{...}}, a plain {"error":"..."} or {"message":...}; another body gives
// only a message (its start).
ServerError read_server_error(const std::string& body);

// The class of a reply with this HTTP status and error (status 0: an error event inside a 200 stream,
// whose code field, where numeric, stands for the status).
ProposerFailure classify_reply(long status, const ServerError& error);

// The status an error event's numeric code names ("500" -> 500), else 0.
long status_in_code(const ServerError& error);

// Whether another attempt at once may succeed (429, 5xx, timeouts, dropped connections).
bool worth_retrying(ProposerFailure failure);

// Transient (the next iteration may succeed), permanent (never as configured) or fatal (stop now).
Proposal::Failure severity(ProposerFailure failure);

}  // namespace kevo
