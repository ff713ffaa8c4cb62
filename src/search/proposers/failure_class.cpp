// See failure_class.hpp. The tables name the type/code values of OpenAI's API and of LiteLLM's
// proxy (its exception classes, which it writes at the start of error.message as
// "litellm.NameError: ...", and its own types such as no_db_connection).
#include "search/proposers/failure_class.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <optional>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>


namespace kevo {
namespace {

using json = nlohmann::json;
using F = ProposerFailure;

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
    return s;
}

std::string text_of(const json& object, const char* key) {
    const auto it = object.find(key);
    if (it == object.end() || it->is_null()) return {};
    if (it->is_string()) return it->get<std::string>();
    if (it->is_number_integer()) return std::to_string(it->get<long long>());
    return {};
}

// "litellm.ContextWindowExceededError: ..." -> "ContextWindowExceededError".
std::string litellm_exception(std::string_view message) {
    constexpr std::string_view prefix = "litellm.";
    if (message.substr(0, prefix.size()) != prefix) return {};
    message.remove_prefix(prefix.size());
    size_t n = 0;
    while (n < message.size() && (std::isalnum(static_cast<unsigned char>(message[n])) || message[n] == '_')) ++n;
    if (n == 0 || n >= message.size() || message[n] != ':') return {};
    return std::string(message.substr(0, n));
}

// Type, code or exception names and the class each stands for (compared lower-cased).
constexpr std::array<std::pair<std::string_view, F>, 32> kNames = {{
    {"invalid_api_key", F::auth},
    {"authentication_error", F::auth},
    {"authenticationerror", F::auth},
    {"invalid_authentication", F::auth},
    {"no_db_connection", F::auth},  // LiteLLM without a database: the key is not its master key
    {"permission_error", F::auth},
    {"permission_denied", F::auth},
    {"permissiondeniederror", F::auth},
    {"auth_error", F::auth},
    {"model_not_found", F::not_found},
    {"not_found_error", F::not_found},
    {"notfounderror", F::not_found},
    {"context_length_exceeded", F::context_exceeded},
    {"contextwindowexceedederror", F::context_exceeded},
    {"string_above_max_length", F::context_exceeded},
    {"request_too_large", F::context_exceeded},
    {"unsupported_parameter", F::bad_request_parameter},
    {"unsupported_value", F::bad_request_parameter},
    {"invalid_parameter", F::bad_request_parameter},
    {"unsupportedparamserror", F::bad_request_parameter},
    {"insufficient_quota", F::quota_exhausted},
    {"billing_hard_limit_reached", F::quota_exhausted},
    {"budgetexceedederror", F::quota_exhausted},
    {"rate_limit_exceeded", F::rate_limited},
    {"rate_limit_error", F::rate_limited},
    {"throttling_error", F::rate_limited},
    {"ratelimiterror", F::rate_limited},
    {"internal_server_error", F::server_error},
    {"internalservererror", F::server_error},
    {"server_error", F::server_error},
    {"overloaded_error", F::server_error},
    {"serviceunavailableerror", F::server_error},
}};

std::optional<F> named_class(const std::string& name) {
    if (name.empty()) return std::nullopt;
    const std::string n = lower(name);
    for (const auto& [key, failure] : kNames)
        if (n == key) return failure;
    if (n == "timeout" || n == "apitimeouterror") return F::timeout;
    return std::nullopt;
}

F status_class(long status, const ServerError& e) {
    if (status == 401 || status == 403) return F::auth;
    if (status == 404) return F::not_found;
    if (status == 408) return F::timeout;
    if (status == 413) return F::context_exceeded;
    if (status == 429) return F::rate_limited;
    if (status >= 500) return F::server_error;
    // kevo's request is well formed, so a 400/422 the server calls an invalid request, or one naming
    // the parameter at fault, is about the model or a parameter as configured.
    if ((status == 400 || status == 422) && (lower(e.type) == "invalid_request_error" || !e.param.empty()))
        return F::bad_request_parameter;
    if (status >= 400) return F::bad_request;
    return F::malformed_reply;  // a 2xx or 3xx that is not a chat completion
}

}  // namespace

ServerError read_server_error(const std::string& body) {
    ServerError e;
    const json j = json::parse(body, nullptr, false);
    if (!j.is_discarded() && j.is_object()) {
        const auto error = j.find("error");
        if (error != j.end() && error->is_object()) {
            e.message = text_of(*error, "message");
            e.type = text_of(*error, "type");
            e.code = text_of(*error, "code");
            e.param = text_of(*error, "param");
        } else if (error != j.end() && error->is_string()) {
            e.message = error->get<std::string>();
        } else {
            e.message = text_of(j, "message");
            e.type = text_of(j, "type");
        }
    }
    if (e.message.empty()) e.message = body.substr(0, 300);
    if (e.param == "None") e.param.clear();  // LiteLLM writes Python's None in some versions
    e.exception = litellm_exception(e.message);
    return e;
}

long status_in_code(const ServerError& error) {
    const std::string& c = error.code;
    if (c.size() != 3 || !std::all_of(c.begin(), c.end(), [](unsigned char ch) { return std::isdigit(ch); })) return 0;
    return std::stol(c);
}

ProposerFailure classify_reply(long status, const ServerError& error) {
    // The most specific name first: LiteLLM's exception class, then the code, then the type.
    for (const std::string* name : {&error.exception, &error.code, &error.type})
        if (const auto named = named_class(*name)) return *named;
    if (status == 0) status = status_in_code(error);
    if (status == 0) return F::stream_error;
    return status_class(status, error);
}

bool worth_retrying(ProposerFailure failure) {
    return failure == F::rate_limited || failure == F::server_error || failure == F::timeout ||
           failure == F::stream_error;
}

Proposal::Failure severity(ProposerFailure failure) {
    switch (failure) {
        case F::none: return Proposal::Failure::none;
        case F::auth:
        case F::not_found:
        case F::bad_request_parameter:
        case F::quota_exhausted:
        case F::command_missing: return Proposal::Failure::permanent;
        case F::cost_unknown: return Proposal::Failure::fatal;
        default: return Proposal::Failure::transient;
    }
}

}  // namespace kevo
