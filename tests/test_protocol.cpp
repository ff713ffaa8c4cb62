// The worker protocol (eval/protocol): every op, event and stage round-trips through its one name
// table; an unknown name is an error; a worker that sends an unknown stage or event ends the
// exchange with a protocol error, an environment error of the evaluation (driven through a worker
// process: a script that speaks the protocol, and the real `kevo worker`).
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <fstream>
#include <set>

#include "backend/device_info_json.hpp"
#include "eval/evaluator.hpp"
#include "eval/protocol.hpp"
#include "eval/worker_client.hpp"
#include "temp_dir.hpp"

namespace kevo {
namespace {

// Every enumerator: the enums are dense from 0 to their last value.
template <class E>
std::vector<E> all_values(E last) {
    std::vector<E> out;
    for (int i = 0; i <= static_cast<int>(last); ++i) out.push_back(static_cast<E>(i));
    return out;
}

template <class E, class Parse>
void expect_round_trip(E last, Parse parse) {
    std::set<std::string> seen;
    for (E value : all_values(last)) {
        const std::string text(name(value));
        EXPECT_NE(text, "?") << "enumerator " << static_cast<int>(value) << " is missing from its table";
        EXPECT_TRUE(seen.insert(text).second) << "two enumerators are called " << text;
        const auto back = parse(text);
        ASSERT_TRUE(back.has_value()) << text;
        EXPECT_EQ(*back, value) << text;
        nlohmann::json j = value;  // the JSON form is the name
        EXPECT_EQ(j, text);
    }
}

TEST(Protocol, EveryOpEventAndStageRoundTrips) {
    expect_round_trip(Op::quit, op_from_name);
    expect_round_trip(Event::error, event_from_name);
    expect_round_trip(Stage::calibrate, stage_from_name);
    EXPECT_EQ(name(Stage::timed_run), "timed_run");
    EXPECT_EQ(name(Op::eval), "eval");
    EXPECT_EQ(name(Event::result), "result");
}

TEST(Protocol, UnknownNamesAreNotValues) {
    EXPECT_FALSE(op_from_name("evaluate"));
    EXPECT_FALSE(event_from_name("Result"));
    EXPECT_FALSE(stage_from_name("compil"));
    EXPECT_FALSE(stage_from_name(""));
    auto op = op_of({{"op", "evaluate"}});
    ASSERT_FALSE(op);
    EXPECT_EQ(op.error().message, "unknown op 'evaluate'");
    EXPECT_FALSE(op_of({{"request", 1}}));
    ASSERT_TRUE(op_of(op_message(Op::calibrate)));
    EXPECT_EQ(*op_of(op_message(Op::calibrate)), Op::calibrate);
}

TEST(Protocol, StageEventsRoundTripAndUnknownStagesAreErrors) {
    const StageEvent sent{Stage::run, "1M", "nominal", 3};
    auto read = read_event(stage_message(sent));
    ASSERT_TRUE(read) << read.error().message;
    EXPECT_EQ(read->kind, Event::stage);
    ASSERT_TRUE(read->stage);
    EXPECT_EQ(read->stage->stage, Stage::run);
    EXPECT_EQ(read->stage->size, "1M");
    EXPECT_EQ(read->stage->trial, "nominal");
    EXPECT_EQ(read->stage->launches, 3u);
    EXPECT_EQ(read->stage->describe(), "run at size 1M (nominal trial)");
    EXPECT_EQ(StageEvent{Stage::compile}.describe(), "compile");

    auto misspelt = read_event({{"event", "stage"}, {"stage", "compil"}});
    ASSERT_FALSE(misspelt);
    EXPECT_EQ(misspelt.error().message, "the worker sent an unknown stage 'compil'");
    EXPECT_FALSE(read_event({{"event", "stage"}}));
    EXPECT_FALSE(read_event({{"event", "stage"}, {"stage", 3}}));
    auto unknown = read_event({{"event", "progres"}, {"message", "x"}});
    ASSERT_FALSE(unknown);
    EXPECT_EQ(unknown.error().message, "the worker sent an unknown event 'progres'");
    EXPECT_FALSE(read_event({{"message", "no event"}}));
    auto progress = read_event({{"event", "progress"}, {"message", "x"}});
    ASSERT_TRUE(progress);
    EXPECT_EQ(progress->kind, Event::progress);
    EXPECT_FALSE(progress->stage);
}

// A stand-in worker: a shell script that announces a device on fd 4, reads one request on fd 3 and
// then sends `lines`, each one event.
std::string fake_worker(const test::TempDir& dir, const std::vector<std::string>& lines) {
    DeviceInfo info;
    info.backend = "opencl";
    info.name = "fake device";
    nlohmann::json ready = event_message(Event::ready);
    ready["device"] = to_json(info);
    std::string script = "#!/bin/sh\necho '" + ready.dump() + "' >&4\nread request <&3\n";
    for (const auto& line : lines) script += "echo '" + line + "' >&4\n";
    script += "sleep 30\n";
    const std::string path = dir.file("worker.sh");
    std::ofstream(path) << script;
    ::chmod(path.c_str(), 0755);
    return path;
}

EvalRequest saxpy_request() {
    EvalRequest request;
    request.task = "saxpy";
    request.profile = "small";
    std::ifstream seed(std::string(KEVO_SOURCE_DIR) + "/tasks/saxpy/seed.cl");
    request.source.assign(std::istreambuf_iterator<char>(seed), {});
    request.timeout_s = 20;
    return request;
}

Expected<EvalResult> evaluate_with(const std::string& worker) {
    EvaluatorOptions options;
    options.backend = "opencl";
    options.worker_executable = worker;
    Evaluator evaluator(options);
    return evaluator.evaluate(saxpy_request(), true);
}

TEST(Protocol, WorkerSendingAnUnknownStageIsAProtocolError) {
    test::TempDir dir("protocol");
    const std::string worker = fake_worker(dir, {R"({"event":"stage","stage":"compil"})"});
    const auto start = std::chrono::steady_clock::now();
    auto result = evaluate_with(worker);
    ASSERT_FALSE(result) << "a misspelt stage was taken for a verdict";
    EXPECT_EQ(result.error().message,
              "worker protocol error: the worker sent an unknown stage 'compil' (the worker was killed; an environment "
              "error, not a verdict on the candidate)");
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 10.0)
        << "the exchange waited instead of stopping at the unknown stage";
}

TEST(Protocol, WorkerSendingAnUnknownEventIsAProtocolError) {
    test::TempDir dir("protocol");
    auto result = evaluate_with(fake_worker(dir, {R"({"event":"stage","stage":"compile"})", R"({"event":"reslt"})"}));
    ASSERT_FALSE(result);
    EXPECT_NE(result.error().message.find("the worker sent an unknown event 'reslt'"), std::string::npos)
        << result.error().message;
}

TEST(Protocol, WorkerSpeakingTheProtocolGivesItsVerdict) {
    // Positive control for the two above: the same script with known names is read as a result.
    test::TempDir dir("protocol");
    EvalResult sent;
    sent.task = "saxpy";
    sent.verdict = Verdict::compile_error;
    sent.diagnostics = "from the fake worker";
    nlohmann::json result = event_message(Event::result);
    result["result"] = to_json(sent);
    result["poisoned"] = false;
    auto got = evaluate_with(fake_worker(dir, {stage_message({Stage::compile}).dump(), result.dump()}));
    ASSERT_TRUE(got) << got.error().message;
    EXPECT_EQ(got->verdict, Verdict::compile_error);
    EXPECT_EQ(got->diagnostics, "from the fake worker");
}

TEST(Protocol, UnknownEventWhileStartingIsAnError) {
    test::TempDir dir("protocol");
    const std::string path = dir.file("worker.sh");
    std::ofstream(path) << "#!/bin/sh\necho '{\"event\":\"redy\"}' >&4\nsleep 30\n";
    ::chmod(path.c_str(), 0755);
    WorkerClient client("opencl", 0, {}, path);
    auto started = client.ensure_started(10);
    ASSERT_FALSE(started);
    EXPECT_EQ(started.error().message, "the worker broke the protocol while starting: the worker sent an unknown event 'redy'");
    EXPECT_FALSE(client.running());
}

// The real `kevo worker`, offline (no device needed): the handler table serves compile only and
// answers other ops, known or not, with an error event.
TEST(Protocol, RealOfflineWorkerRefusesAnythingButCompile) {
    WorkerClient client("opencl", 0, "sm_90", KEVO_BINARY);
    auto started = client.ensure_started(60);
    ASSERT_TRUE(started) << started.error().message;
    EXPECT_EQ(started->name, "offline opencl compiler (sm_90)");
    auto none = [](const WorkerEvent*) { return std::optional<std::string>(); };
    for (const nlohmann::json& request : {op_message(Op::info), nlohmann::json{{"op", "bogus"}}}) {
        auto outcome = client.exchange(request, {Event::error, Event::info}, none);
        ASSERT_EQ(outcome.kind, ExchangeOutcome::Kind::reply) << outcome.detail;
        EXPECT_EQ(outcome.reply_kind, Event::error);
        EXPECT_EQ(outcome.reply.value("error", ""),
                  "an offline worker only compiles (got '" + request.value("op", "") + "')");
    }
    EXPECT_TRUE(client.running());
}

TEST(Protocol, RealWorkerAnswersInfoAndRefusesAnUnknownOp) {
    WorkerClient client("opencl", 0, {}, KEVO_BINARY);
    auto started = client.ensure_started(60);
    if (!started) GTEST_SKIP() << "no OpenCL device: " << started.error().message;
    auto none = [](const WorkerEvent*) { return std::optional<std::string>(); };
    auto info = client.exchange(op_message(Op::info), {Event::info, Event::error}, none);
    ASSERT_EQ(info.kind, ExchangeOutcome::Kind::reply) << info.detail;
    EXPECT_EQ(info.reply_kind, Event::info);
    EXPECT_EQ(info.reply["device"].value("name", ""), started->name);
    auto bogus = client.exchange({{"op", "bogus"}}, {Event::info, Event::error}, none);
    ASSERT_EQ(bogus.kind, ExchangeOutcome::Kind::reply) << bogus.detail;
    EXPECT_EQ(bogus.reply_kind, Event::error);
    EXPECT_EQ(bogus.reply.value("error", ""), "unknown op 'bogus'");
    EXPECT_TRUE(client.running());
}

}  // namespace
}  // namespace kevo
