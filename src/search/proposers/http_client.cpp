// libcurl-backed HTTP POST with a request deadline; see http_client.hpp.
#include "search/proposers/http_client.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <mutex>
#include <optional>

#include <fmt/format.h>

#include <curl/curl.h>

#include "core/interrupt.hpp"

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

using Clock = std::chrono::steady_clock;

// What the progress callback watches: a signal, the run's deadline and, for a stream, the silence
// between bytes. `why` says which one ended the transfer.
struct Watch {
    enum class Why { none, interrupted, deadline, idle } why = Why::none;
    std::optional<Clock::time_point> deadline;
    double idle_s = 0;  // 0: not watched
    Clock::time_point last_byte = Clock::now();
    curl_off_t bytes = 0;
};

int on_progress(void* user, curl_off_t, curl_off_t down, curl_off_t, curl_off_t up) {
    auto& w = *static_cast<Watch*>(user);
    const auto now = Clock::now();
    if (interrupt_requested()) w.why = Watch::Why::interrupted;
    else if (w.deadline && now >= *w.deadline) w.why = Watch::Why::deadline;
    else if (down + up != w.bytes) w.bytes = down + up, w.last_byte = now;
    else if (w.idle_s > 0 && std::chrono::duration<double>(now - w.last_byte).count() > w.idle_s) w.why = Watch::Why::idle;
    return w.why == Watch::Why::none ? 0 : 1;  // non-zero aborts the transfer
}

long to_ms(double seconds) { return std::max(1L, static_cast<long>(seconds * 1000.0)); }

HttpResult::Transport transport_of(CURLcode code) {
    using T = HttpResult::Transport;
    switch (code) {
        case CURLE_OPERATION_TIMEDOUT: return T::timeout;
        case CURLE_COULDNT_RESOLVE_HOST:
        case CURLE_COULDNT_RESOLVE_PROXY: return T::unresolved;
        case CURLE_UNSUPPORTED_PROTOCOL:
        case CURLE_URL_MALFORMAT: return T::bad_url;
        case CURLE_PEER_FAILED_VERIFICATION:
        case CURLE_SSL_CACERT_BADFILE:
        case CURLE_SSL_CERTPROBLEM: return T::tls_error;
        case CURLE_COULDNT_CONNECT:
        case CURLE_SEND_ERROR:
        case CURLE_RECV_ERROR:
        case CURLE_GOT_NOTHING:
        case CURLE_PARTIAL_FILE:
        case CURLE_SSL_CONNECT_ERROR: return T::connection_error;
        default: return T::other_error;
    }
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
                            const RequestLimits& limits) {
    return perform(url, &body, headers, limits);
}

HttpResult HttpClient::get(const std::string& url, const std::vector<std::string>& headers, const RequestLimits& limits) {
    return perform(url, nullptr, headers, limits);
}

HttpResult HttpClient::perform(const std::string& url, const std::string* body, const std::vector<std::string>& headers,
                               const RequestLimits& limits) {
    HttpResult result;
    CURL* curl = static_cast<CURL*>(handle_);
    if (!curl) {
        result.error = "curl_easy_init failed";
        return result;
    }
    if (interrupt_requested()) {
        result.transport = HttpResult::Transport::interrupted;
        result.error = std::string("interrupted by ") + interrupt_signal_name() + " before the request was sent";
        return result;
    }
    if (limits.deadline && Clock::now() >= *limits.deadline) {
        result.transport = HttpResult::Transport::deadline;
        result.error = "the run's deadline came before the request was sent";
        return result;
    }
    curl_easy_reset(curl);

    curl_slist* list = nullptr;
    for (const auto& h : headers) list = curl_slist_append(list, h.c_str());
    // No "Expect: 100-continue" round trip for large prompts.
    list = curl_slist_append(list, "Expect:");

    // The whole request's bound: its own limit (none for an idle-watched stream without a total),
    // the progress callback keeping the deadline; curl's own timer is the precise one.
    Watch watch;
    watch.deadline = limits.deadline;
    if (limits.idle) watch.idle_s = limits.timeout_s;
    const double own_s = limits.idle ? limits.total_s : limits.timeout_s;
    double total_s = own_s;
    if (limits.deadline) {
        const double left = std::chrono::duration<double>(*limits.deadline - Clock::now()).count();
        total_s = own_s > 0 ? std::min(own_s, left) : left;
    }
    const long timeout_ms = total_s > 0 ? to_ms(total_s) : 0;  // 0: curl's "no timeout"
    const long connect_ms = std::min(timeout_ms > 0 ? timeout_ms : 30000L, std::min(to_ms(limits.timeout_s), 30000L));
    const std::string no_proxy = no_proxy_list();
    char error_buffer[CURL_ERROR_SIZE] = {0};

    curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
    if (body) {
        curl_easy_setopt(curl, CURLOPT_POST, 1L);
        curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body->data());
        curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body->size()));
    } else {
        curl_easy_setopt(curl, CURLOPT_HTTPGET, 1L);
    }
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, list);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, connect_ms);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(curl, CURLOPT_XFERINFODATA, &watch);
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
    const std::string received = fmt::format(" with {} bytes received", result.body.size());
    result.error = error_buffer[0] ? error_buffer : curl_easy_strerror(code);
    result.transport = transport_of(code);
    const bool deadline_passed = limits.deadline && Clock::now() >= *limits.deadline - std::chrono::milliseconds(20);
    if (watch.why == Watch::Why::interrupted) {
        result.transport = HttpResult::Transport::interrupted;
        result.error = std::string("interrupted by ") + interrupt_signal_name() + received;
    } else if (watch.why == Watch::Why::deadline || (result.transport == HttpResult::Transport::timeout && deadline_passed)) {
        result.transport = HttpResult::Transport::deadline;
        result.error = "the run's deadline came" + received;
    } else if (watch.why == Watch::Why::idle) {
        result.transport = HttpResult::Transport::timeout;
        result.error = fmt::format("no byte arrived for {:g} s{}", limits.timeout_s, received);
    }
    return result;
}

}  // namespace kevo
