// Tests of the worker protocol's transport over real pipes: round trips, partial lines, stray
// non-JSON output, timeouts, end of stream, large messages and a vanished peer.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>

#include "eval/line_channel.hpp"

namespace kevo {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

// One pipe per direction: `a` writes what `b` reads and the other way round.
struct Pipes {
    Pipes() {
        if (::pipe(a_to_b) != 0 || ::pipe(b_to_a) != 0) std::abort();  // no pipes: nothing to test
        a = std::make_unique<LineChannel>(b_to_a[0], a_to_b[1]);
        b = std::make_unique<LineChannel>(a_to_b[0], b_to_a[1]);
    }
    ~Pipes() {
        for (int* fds : {a_to_b, b_to_a})
            for (int i = 0; i < 2; ++i)
                if (fds[i] >= 0) ::close(fds[i]);
    }
    // Raw bytes onto the a->b pipe, as a misbehaving peer would write them.
    void write_raw(const std::string& bytes) {
        ASSERT_EQ(::write(a_to_b[1], bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
    }
    static void close_fd(int& fd) {
        ::close(fd);
        fd = -1;
    }

    int a_to_b[2] = {-1, -1};
    int b_to_a[2] = {-1, -1};
    std::unique_ptr<LineChannel> a, b;
};

TEST(LineChannel, RoundTripsSeveralMessages) {
    Pipes p;
    const json messages[] = {
        json{{"type", "hello"}, {"version", 1}},
        json{{"type", "result"}, {"values", {1.5, -2.0, 3e10}}, {"nested", {{"ok", true}}}},
        json{{"text", "two\nlines with \"quotes\" and \xc3\xa9"}},  // a newline inside a string stays one line
        json::array({1, 2, 3}),
        json("just a string"),
    };
    for (const auto& m : messages) ASSERT_TRUE(p.a->send(m));
    for (const auto& m : messages) {
        auto got = p.b->receive(1000);
        ASSERT_TRUE(got.has_value());
        EXPECT_EQ(*got, m);
    }
    EXPECT_FALSE(p.b->closed());

    // And the other way.
    ASSERT_TRUE(p.b->send(json{{"type", "bye"}}));
    auto reply = p.a->receive(1000);
    ASSERT_TRUE(reply.has_value());
    EXPECT_EQ((*reply)["type"], "bye");
}

TEST(LineChannel, InvalidUtf8IsSentAsReplacement) {
    Pipes p;
    // A worker may forward compiler output with any bytes; the line must still be valid JSON.
    ASSERT_TRUE(p.a->send(json{{"log", std::string("bad \xff byte")}}));
    auto got = p.b->receive(1000);
    ASSERT_TRUE(got.has_value());
    EXPECT_NE((*got)["log"].get<std::string>().find("bad "), std::string::npos);
}

TEST(LineChannel, HoldsAPartialLineUntilItIsComplete) {
    Pipes p;
    p.write_raw("{\"stage\": \"comp");
    EXPECT_FALSE(p.b->receive(50).has_value());
    EXPECT_FALSE(p.b->closed());
    p.write_raw("ile\", \"n\": 4");
    EXPECT_FALSE(p.b->receive(50).has_value());
    p.write_raw("}\n{\"second\":");
    auto first = p.b->receive(1000);
    ASSERT_TRUE(first.has_value());
    EXPECT_EQ(*first, (json{{"stage", "compile"}, {"n", 4}}));
    EXPECT_FALSE(p.b->receive(50).has_value());
    p.write_raw("2}\n");
    auto second = p.b->receive(1000);
    ASSERT_TRUE(second.has_value());
    EXPECT_EQ(*second, (json{{"second", 2}}));
}

TEST(LineChannel, SkipsLinesThatAreNotJson) {
    Pipes p;
    p.write_raw("warning: something printed to stdout\n\n{not json}\n{\"ok\": 1}\nmore noise\n{\"ok\": 2}\n");
    auto first = p.b->receive(1000);
    ASSERT_TRUE(first.has_value());
    EXPECT_EQ(*first, (json{{"ok", 1}}));
    auto second = p.b->receive(1000);
    ASSERT_TRUE(second.has_value());
    EXPECT_EQ(*second, (json{{"ok", 2}}));
    // Only noise left: nothing to return.
    p.write_raw("noise only\n");
    EXPECT_FALSE(p.b->receive(50).has_value());
    EXPECT_FALSE(p.b->closed());
}

TEST(LineChannel, ReceiveTimesOut) {
    Pipes p;
    const auto start = Clock::now();
    EXPECT_FALSE(p.b->receive(150).has_value());
    const double waited = std::chrono::duration<double>(Clock::now() - start).count();
    EXPECT_GE(waited, 0.14);
    EXPECT_LT(waited, 2.0);
    EXPECT_FALSE(p.b->closed());

    // A zero timeout polls and returns at once.
    EXPECT_FALSE(p.b->receive(0).has_value());
}

TEST(LineChannel, ClosingTheWriterSetsClosed) {
    Pipes p;
    ASSERT_TRUE(p.a->send(json{{"last", true}}));
    p.close_fd(p.a_to_b[1]);
    // What was sent before the close is still delivered...
    auto last = p.b->receive(1000);
    ASSERT_TRUE(last.has_value());
    EXPECT_EQ((*last)["last"], true);
    // ...then the end of the stream is seen, without waiting out the timeout.
    const auto start = Clock::now();
    EXPECT_FALSE(p.b->receive(5000).has_value());
    EXPECT_LT(std::chrono::duration<double>(Clock::now() - start).count(), 2.0);
    EXPECT_TRUE(p.b->closed());
    EXPECT_FALSE(p.b->receive(10).has_value());
}

TEST(LineChannel, ClosedIsSeenWhileWaiting) {
    Pipes p;
    std::thread closer([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        p.close_fd(p.a_to_b[1]);
    });
    EXPECT_FALSE(p.b->receive(-1).has_value());  // a forever wait ends at the end of the stream
    closer.join();
    EXPECT_TRUE(p.b->closed());
}

TEST(LineChannel, CarriesAMessageLargerThanThePipe) {
    Pipes p;
    // 1 MiB in one line: more than a pipe holds and more than one read() returns.
    const std::string payload(1 << 20, 'x');
    std::thread writer([&] { EXPECT_TRUE(p.a->send(json{{"payload", payload}, {"end", 7}})); });
    auto got = p.b->receive(5000);
    writer.join();
    ASSERT_TRUE(got.has_value());
    EXPECT_EQ((*got)["payload"].get<std::string>().size(), payload.size());
    EXPECT_EQ((*got)["end"], 7);
}

TEST(LineChannel, SendFailsWhenThePeerIsGone) {
    Pipes p;
    // kevo ignores SIGPIPE process-wide (cli/main.cpp); the test binary must do the same.
    auto previous = std::signal(SIGPIPE, SIG_IGN);
    p.close_fd(p.a_to_b[0]);
    EXPECT_FALSE(p.a->send(json{{"to", "nobody"}}));
    std::signal(SIGPIPE, previous);
}

}  // namespace
}  // namespace kevo
