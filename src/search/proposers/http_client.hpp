// A small blocking HTTP client over libcurl, enough for JSON POSTs to a chat-completions endpoint:
// one easy handle (connections are reused), a whole-request deadline, no signals (safe in threads).
// Only http:// and https:// are spoken. Transport failures are returned as data so the caller can
// decide to retry.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace kevo {

struct HttpResult {
    enum class Transport {
        ok,
        timeout,
        connection_error,  // refused, reset, nothing received: may work on a retry
        unresolved,        // the host name does not resolve: a retry does not help
        bad_url,           // malformed, or a scheme other than http/https
        other_error,
    };
    Transport transport = Transport::other_error;
    std::string error;                           // curl's description when transport != ok
    long status = 0;                             // HTTP status when transport == ok
    std::string body;
    std::map<std::string, std::string> headers;  // lower-cased names; the last value wins
};

class HttpClient {
public:
    HttpClient();
    ~HttpClient();
    HttpClient(const HttpClient&) = delete;
    HttpClient& operator=(const HttpClient&) = delete;

    // `headers` are "Name: value" lines. `timeout_s` bounds the whole request, connection included.
    HttpResult post(const std::string& url, const std::string& body, const std::vector<std::string>& headers,
                    double timeout_s);

private:
    void* handle_ = nullptr;  // CURL*; kept opaque so curl.h stays out of this header
};

}  // namespace kevo
