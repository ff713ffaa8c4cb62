// libcurl-backed HTTP POST with a request deadline; see http_client.hpp.
#include "search/proposers/http_client.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <mutex>

#include <curl/curl.h>

namespace kevo {
namespace {

void global_init_once() {
    static std::once_flag flag;
    std::call_once(flag, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

size_t on_body(char* data, size_t size, size_t count, void* user) {
    static_cast<std::string*>(user)->append(data, size * count);
    return size * count;
}

std::string trim(std::string s) {
    const auto space = [](unsigned char c) { return std::isspace(c) != 0; };
    s.erase(s.begin(), std::find_if_not(s.begin(), s.end(), space));
    s.erase(std::find_if_not(s.rbegin(), s.rend(), space).base(), s.end());
    return s;
}

size_t on_header(char* data, size_t size, size_t count, void* user) {
    auto& headers = *static_cast<std::map<std::string, std::string>*>(user);
    const std::string line(data, size * count);
    if (line.rfind("HTTP/", 0) == 0) headers.clear();  // a new response (after a redirect or 100-continue)
    const size_t colon = line.find(':');
    if (colon != std::string::npos) {
        std::string name = trim(line.substr(0, colon));
        std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
        headers[name] = trim(line.substr(colon + 1));
    }
    return size * count;
}

// Loopback never goes through a proxy (a local model server behind a corporate http_proxy
// setting would otherwise be unreachable); whatever no_proxy already says is kept.
std::string no_proxy_list() {
    std::string list = "localhost,127.0.0.1,::1";
    for (const char* name : {"no_proxy", "NO_PROXY"})
        if (const char* v = std::getenv(name); v && *v) {
            list += ",";
            list += v;
        }
    return list;
}

}  // namespace

HttpClient::HttpClient() {
    global_init_once();
    handle_ = curl_easy_init();
}

HttpClient::~HttpClient() {
    if (handle_) curl_easy_cleanup(static_cast<CURL*>(handle_));
}

HttpResult HttpClient::post(const std::string& url, const std::string& body, const std::vector<std::string>& headers,
                            double timeout_s) {
    HttpResult result;
    CURL* curl = static_cast<CURL*>(handle_);
    if (!curl) {
        result.error = "curl_easy_init failed";
        return result;
    }
    curl_easy_reset(curl);

    curl_slist* list = nullptr;
    for (const auto& h : headers) list = curl_slist_append(list, h.c_str());
    // No "Expect: 100-continue" round trip for large prompts.
    list = curl_slist_append(list, "Expect:");

    const long timeout_ms = std::max(1L, static_cast<long>(timeout_s * 1000.0));
    const std::string no_proxy = no_proxy_list();
    char error_buffer[CURL_ERROR_SIZE] = {0};

    curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
    curl_easy_setopt(curl, CURLOPT_POST, 1L);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.data());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, list);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, std::min(timeout_ms, 30000L));
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(curl, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(curl, CURLOPT_NOPROXY, no_proxy.c_str());
    curl_easy_setopt(curl, CURLOPT_ACCEPT_ENCODING, "");  // whatever this libcurl can decode
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error_buffer);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &result.body);
    curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(curl, CURLOPT_HEADERDATA, &result.headers);

    const CURLcode code = curl_easy_perform(curl);
    curl_slist_free_all(list);
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, nullptr);  // the buffer is about to go out of scope

    if (code == CURLE_OK) {
        result.transport = HttpResult::Transport::ok;
        curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &result.status);
        return result;
    }
    result.error = error_buffer[0] ? error_buffer : curl_easy_strerror(code);
    switch (code) {
        case CURLE_OPERATION_TIMEDOUT:
            result.transport = HttpResult::Transport::timeout;
            break;
        case CURLE_COULDNT_RESOLVE_HOST:
        case CURLE_COULDNT_RESOLVE_PROXY:
            result.transport = HttpResult::Transport::unresolved;
            break;
        case CURLE_UNSUPPORTED_PROTOCOL:
        case CURLE_URL_MALFORMAT:
            result.transport = HttpResult::Transport::bad_url;
            break;
        case CURLE_COULDNT_CONNECT:
        case CURLE_SEND_ERROR:
        case CURLE_RECV_ERROR:
        case CURLE_GOT_NOTHING:
        case CURLE_PARTIAL_FILE:
        case CURLE_SSL_CONNECT_ERROR:
            result.transport = HttpResult::Transport::connection_error;
            break;
        default:
            result.transport = HttpResult::Transport::other_error;
            break;
    }
    return result;
}

}  // namespace kevo
