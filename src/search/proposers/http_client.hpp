// A small blocking HTTP client over libcurl, enough for JSON requests to a chat-completions
// endpoint: one easy handle (connections are reused), no signals (safe in threads). A request ends
// at its own limit (the whole request, or with `idle` the silence between bytes and a separate
// total), at the run's deadline, or as soon as SIGINT/SIGTERM is noticed (core/interrupt: the
// transfer's progress callback looks at the flag, at least about once a second). Only http:// and
// https:// are spoken. Transport failures are returned as data so the caller can decide to retry.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kevo {

struct HttpResult {
    enum class Transport {
        ok,
        timeout,           // the request's own limit (whole request, or the silence between bytes)
        connection_error,  // refused, reset, nothing received: may work on a retry
        unresolved,        // the host name does not resolve: a retry does not help
        bad_url,           // malformed, or a scheme other than http/https
        tls_error,         // the server's certificate is not trusted: a retry does not help
        interrupted,       // SIGINT/SIGTERM arrived
        deadline,          // the run's deadline came
        other_error,
    };
    Transport transport = Transport::other_error;
    std::string error;                           // curl's description when transport != ok
    long status = 0;                             // HTTP status when transport == ok
    std::string body;                            // what arrived, also when cut short
    std::map<std::string, std::string> headers;  // lower-cased names; the last value wins
};

// How long one request may take.
struct RequestLimits {
    double timeout_s = 300;  // the whole request, connection included; with `idle`, the longest silence
    bool idle = false;       // timeout_s bounds the silence between bytes (a stream), total_s the whole
    double total_s = 0;      // with idle: the whole request (0: no bound but the deadline)
    std::optional<std::chrono::steady_clock::time_point> deadline;  // the run's: the request is cut there
};

class HttpClient {
public:
    HttpClient();
    ~HttpClient();
    HttpClient(const HttpClient&) = delete;
    HttpClient& operator=(const HttpClient&) = delete;

    // `headers` are "Name: value" lines.
    HttpResult post(const std::string& url, const std::string& body, const std::vector<std::string>& headers,
                    const RequestLimits& limits);
    HttpResult get(const std::string& url, const std::vector<std::string>& headers, const RequestLimits& limits);

private:
    HttpResult perform(const std::string& url, const std::string* body, const std::vector<std::string>& headers,
                       const RequestLimits& limits);
    void* handle_ = nullptr;  // CURL*; kept opaque so curl.h stays out of this header
};

}  // namespace kevo
