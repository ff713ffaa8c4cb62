// The class of a failed chat-completions reply, from its status and error body only: LiteLLM
// proxy 1.108.7's bodies (captured from the real proxy) and OpenAI's, and messages whose varying
// parts (token counts, request ids, retry history) change nothing.
#include <gtest/gtest.h>

#include <string>

#include "search/proposers/common.hpp"
#include "search/proposers/failure_class.hpp"

namespace kevo {
namespace {

using F = ProposerFailure;

F of(long status, const std::string& body) { return classify_reply(status, read_server_error(body)); }

TEST(FailureClass, LiteLlmBodiesByClass) {
    EXPECT_EQ(of(400, R"J({"error":{"message":"No connected db.","type":"no_db_connection","param":null,"code":"400"}})J"),
              F::auth);
    EXPECT_EQ(of(400, R"J({"error":{"message":"/chat/completions: Invalid model name passed in model=nosuch. Call `/v1/models` to view available models for your key.","type":"invalid_request_error","param":null,"code":"400"}})J"),
              F::bad_request_parameter);
    EXPECT_EQ(of(429, R"J({"error":{"message":"litellm.RateLimitError: this is a mock rate limit error\n\nLiteLLM: model group 'rl' failed with the error above. No fallback was attempted.","type":"throttling_error","param":null,"code":"429"}})J"),
              F::rate_limited);
    EXPECT_EQ(of(500, R"J({"error":{"message":"litellm.InternalServerError: this is a mock internal server error","type":"internal_server_error","param":null,"code":"500"}})J"),
              F::server_error);
    EXPECT_EQ(of(400, R"J({"error":{"message":"litellm.UnsupportedParamsError: O-series models don't support temperature=0.7.","type":"invalid_request_error","param":null,"code":"400"}})J"),
              F::bad_request_parameter);
    EXPECT_EQ(of(500, "Internal Server Error"), F::server_error);  // LiteLLM's answer to a request without a key
    // An error event inside a stream: no HTTP status, the code field stands for it.
    EXPECT_EQ(of(0, R"J({"error": {"message": "litellm.InternalServerError: The model is repeating the same chunk = abc.", "type": "internal_server_error", "param": null, "code": "500"}})J"),
              F::server_error);
    EXPECT_EQ(of(0, R"J({"error": {"message": "something broke"}})J"), F::stream_error);
}

TEST(FailureClass, TheVaryingPartsOfAMessageChangeNothing) {
    const auto context = [](int got) {
        return R"J({"error":{"message":"litellm.ContextWindowExceededError: litellm.BadRequestError: Context Window exceeded. Max Input Tokens=100000, Got=)J" +
               std::to_string(got) + R"J(","type":"invalid_request_error","param":null,"code":"400"}})J";
    };
    EXPECT_EQ(of(400, context(447184)), F::context_exceeded);
    EXPECT_EQ(of(400, context(447344)), F::context_exceeded);
    // The same 401 with and without a request id and a retry history.
    EXPECT_EQ(of(401, R"J({"error":{"message":"Incorrect API key provided (request req_1)"}})J"), F::auth);
    EXPECT_EQ(of(401, R"J({"error":{"message":"Incorrect API key (attempts: HTTP 429, HTTP 401) req_2"}})J"), F::auth);
    // The wording alone never decides: a 400 naming "model" in its text but no type is a bad request.
    EXPECT_EQ(of(400, R"J({"error":{"message":"invalid model ID"}})J"), F::bad_request);
}

TEST(FailureClass, OpenAiCodesAndStatusesByClass) {
    EXPECT_EQ(of(401, R"J({"error":{"message":"x","type":"invalid_request_error","code":"invalid_api_key"}})J"), F::auth);
    EXPECT_EQ(of(404, R"J({"error":{"message":"x","type":"invalid_request_error","code":"model_not_found"}})J"), F::not_found);
    EXPECT_EQ(of(400, R"J({"error":{"message":"x","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}})J"),
              F::context_exceeded);
    EXPECT_EQ(of(400, R"J({"error":{"message":"x","type":"invalid_request_error","param":"temperature","code":"unsupported_value"}})J"),
              F::bad_request_parameter);
    EXPECT_EQ(of(429, R"J({"error":{"message":"x","type":"insufficient_quota","code":"insufficient_quota"}})J"),
              F::quota_exhausted);
    EXPECT_EQ(of(403, "forbidden"), F::auth);
    EXPECT_EQ(of(404, "<html>not found</html>"), F::not_found);
    EXPECT_EQ(of(503, R"J({"error":"overloaded"})J"), F::server_error);
    EXPECT_EQ(of(529, R"J({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})J"), F::server_error);
    EXPECT_EQ(of(409, "{}"), F::bad_request);
    EXPECT_TRUE(worth_retrying(F::rate_limited));
    EXPECT_TRUE(worth_retrying(F::server_error));
    EXPECT_FALSE(worth_retrying(F::auth));
    EXPECT_EQ(severity(F::auth), Proposal::Failure::permanent);
    EXPECT_EQ(severity(F::server_error), Proposal::Failure::transient);
    EXPECT_EQ(severity(F::cost_unknown), Proposal::Failure::fatal);
}

TEST(FailureClass, NotesAreOneCleanLine) {
    EXPECT_EQ(one_line("litellm.RateLimitError: mock\n\nLiteLLM: model group 'rl' failed.\n"),
              "litellm.RateLimitError: mock LiteLLM: model group 'rl' failed.");
    EXPECT_EQ(one_line(std::string(300, 'a'), 10), "aaaaaaaaaa...");
    EXPECT_EQ(one_line("\xc3\xa9\xc3\xa9\xc3\xa9", 3), "\xc3\xa9...");
}

}  // namespace
}  // namespace kevo
