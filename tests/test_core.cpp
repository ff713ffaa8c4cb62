// Tests of the core helpers: timing statistics, the counter-based RNG and its fills, content
// hashes (pinned values: caches on disk depend on them) and the file helpers.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <optional>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "core/files.hpp"
#include "core/hash.hpp"
#include "core/rng.hpp"
#include "core/settle.hpp"
#include "core/json.hpp"
#include "core/stats.hpp"

namespace kevo {
namespace {

namespace fs = std::filesystem;

// A fresh folder under the system temp directory, removed when the test ends.
class TempDir {
public:
    TempDir() {
        path_ = fs::temp_directory_path() / ("kevo-core-test-" + std::to_string(::getpid()) + "-" +
                                             std::to_string(counter_++));
        fs::remove_all(path_);
        fs::create_directories(path_);
    }
    ~TempDir() {
        std::error_code ec;
        fs::remove_all(path_, ec);
    }
    const fs::path& path() const { return path_; }

private:
    fs::path path_;
    static inline int counter_ = 0;
};

// ---- stats ----

TEST(Core, SummarizeOddCount) {
    const Summary s = summarize({5.0, 1.0, 3.0});
    EXPECT_EQ(s.count, 3);
    EXPECT_DOUBLE_EQ(s.median, 3.0);
    EXPECT_DOUBLE_EQ(s.min, 1.0);
    EXPECT_DOUBLE_EQ(s.max, 5.0);
    EXPECT_DOUBLE_EQ(s.mean, 3.0);
}

TEST(Core, SummarizeEvenCountAveragesTheMiddlePair) {
    const Summary s = summarize({4.0, 1.0, 10.0, 2.0});
    EXPECT_EQ(s.count, 4);
    EXPECT_DOUBLE_EQ(s.median, 3.0);  // (2 + 4) / 2
    EXPECT_DOUBLE_EQ(s.min, 1.0);
    EXPECT_DOUBLE_EQ(s.max, 10.0);
    EXPECT_DOUBLE_EQ(s.mean, 4.25);
}

TEST(Core, SummarizeCoefficientOfVariation) {
    const Summary constant = summarize({2.5, 2.5, 2.5, 2.5, 2.5});
    EXPECT_DOUBLE_EQ(constant.cv, 0.0);
    EXPECT_DOUBLE_EQ(constant.median, 2.5);

    // 1..5: mean 3, sample standard deviation sqrt(2.5).
    const Summary s = summarize({1, 2, 3, 4, 5});
    EXPECT_NEAR(s.cv, std::sqrt(2.5) / 3.0, 1e-12);

    const Summary one = summarize({7.0});
    EXPECT_DOUBLE_EQ(one.median, 7.0);
    EXPECT_DOUBLE_EQ(one.cv, 0.0);

    const Summary none = summarize({});
    EXPECT_EQ(none.count, 0);
    EXPECT_DOUBLE_EQ(none.median, 0.0);
}

TEST(Core, GeometricMean) {
    EXPECT_NEAR(geometric_mean({1.0, 4.0, 16.0}), 4.0, 1e-12);
    EXPECT_NEAR(geometric_mean({2.0, 8.0}), 4.0, 1e-12);
    EXPECT_NEAR(geometric_mean({3.0}), 3.0, 1e-12);
    EXPECT_EQ(geometric_mean({2.0, 0.0, 8.0}), 0.0);
    EXPECT_EQ(geometric_mean({2.0, -1.0, 8.0}), 0.0);
    EXPECT_EQ(geometric_mean({2.0, std::numeric_limits<double>::quiet_NaN()}), 0.0);
    EXPECT_EQ(geometric_mean({}), 0.0);
    // Large scores must not overflow through a running product.
    EXPECT_NEAR(geometric_mean(std::vector<double>(400, 1e300)) / 1e300, 1.0, 1e-9);
}

// ---- rng ----

// A measurement that yields the given values in turn.
std::function<Expected<double>()> scripted(std::vector<double> values, int* calls) {
    return [values = std::move(values), calls]() -> Expected<double> {
        const int i = (*calls)++;
        if (i >= static_cast<int>(values.size())) return make_error("no more values");
        return values[static_cast<size_t>(i)];
    };
}

TEST(Settle, StopsOnceAnotherPassConfirmsTheBest) {
    int calls = 0;
    // 17.2 and 17.9 agree with each other but not with the best so far (40.4): a slowdown, not the rate.
    auto s = settle(scripted({40.4, 6.6, 17.2, 17.9, 39.1, 99.0}, &calls), {6, 0.05});
    ASSERT_TRUE(s) << s.error().message;
    EXPECT_TRUE(s->agreed);
    EXPECT_EQ(calls, 5);
    EXPECT_DOUBLE_EQ(s->value, 40.4);
    EXPECT_EQ(s->passes, (std::vector<double>{40.4, 6.6, 17.2, 17.9, 39.1}));
    EXPECT_NEAR(s->spread, (40.4 - 6.6) / 17.9, 1e-12);
}

TEST(Settle, ASlowedRunOfPassesDoesNotSettleBelowTheBest) {
    int calls = 0;
    // An FMA calibration on the 2-core CPU machine.
    auto s = settle(scripted({124.9, 95.9, 66.2, 67.5}, &calls), {4, 0.05});
    ASSERT_TRUE(s) << s.error().message;
    EXPECT_FALSE(s->agreed) << "the best pass was never confirmed";
    EXPECT_DOUBLE_EQ(s->value, 124.9);
    calls = 0;
    auto later = settle(scripted({95.9, 124.9, 66.2, 121.0}, &calls), {6, 0.05});
    ASSERT_TRUE(later);
    EXPECT_TRUE(later->agreed);
    EXPECT_EQ(calls, 4);
    EXPECT_DOUBLE_EQ(later->value, 124.9);
}

TEST(Settle, PassesThatNeverAgreeAreReportedNotHidden) {
    int calls = 0;
    // The PoCL figures a reviewer saw within 20 minutes: no two in a row within 5%.
    auto s = settle(scripted({40.4, 6.6, 17.2, 33.7}, &calls), {4, 0.05});
    ASSERT_TRUE(s) << s.error().message;
    EXPECT_FALSE(s->agreed);
    EXPECT_EQ(calls, 4);
    EXPECT_DOUBLE_EQ(s->value, 40.4);
    EXPECT_GT(s->spread, 1.0);
}

TEST(Settle, AgreementIsRelativeToTheLargerPass) {
    int calls = 0;
    auto just_inside = settle(scripted({100.0, 95.0}, &calls), {3, 0.05});
    ASSERT_TRUE(just_inside);
    EXPECT_TRUE(just_inside->agreed);
    calls = 0;
    auto just_outside = settle(scripted({100.0, 94.9, 200.0}, &calls), {3, 0.05});
    ASSERT_TRUE(just_outside);
    EXPECT_FALSE(just_outside->agreed);
    EXPECT_EQ(just_outside->passes.size(), 3u);
}

TEST(Settle, AnErrorEndsTheSettling) {
    int calls = 0;
    auto s = settle(scripted({1.0}, &calls), {4, 0.05});
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().message, "no more values");
}

struct JsonSample {
    double value = 1.5;
    double missing_keeps_default = 7;
    std::optional<double> maybe;
    std::string name = "x";
};
KEVO_JSON_FIELDS(JsonSample, value, missing_keeps_default, maybe, name)

TEST(Json, FieldListsWriteNanAsNullAndReadItBackAsNan) {
    JsonSample a;
    a.value = std::numeric_limits<double>::quiet_NaN();
    const nlohmann::json j = a;
    EXPECT_TRUE(j["value"].is_null());
    EXPECT_TRUE(j["maybe"].is_null());
    nlohmann::json partial = nlohmann::json::parse(j.dump());
    partial.erase("missing_keeps_default");
    partial["maybe"] = 2.5;
    const auto b = partial.get<JsonSample>();
    EXPECT_TRUE(std::isnan(b.value));
    EXPECT_DOUBLE_EQ(b.missing_keeps_default, 7);
    ASSERT_TRUE(b.maybe.has_value());
    EXPECT_DOUBLE_EQ(*b.maybe, 2.5);
    EXPECT_THROW(nlohmann::json::array().get<JsonSample>(), nlohmann::json::exception);
    nlohmann::json wrong = j;
    wrong["name"] = 3;
    EXPECT_THROW(wrong.get<JsonSample>(), nlohmann::json::exception);
}

TEST(Core, RngIsDeterministic) {
    EXPECT_EQ(rng::bits(42, 7, 1000), rng::bits(42, 7, 1000));
    EXPECT_EQ(rng::uniform(42, 7, 1000), rng::uniform(42, 7, 1000));
    EXPECT_EQ(rng::normal(42, 7, 1000), rng::normal(42, 7, 1000));
    EXPECT_NE(rng::bits(42, 7, 1000), rng::bits(43, 7, 1000));
    EXPECT_NE(rng::bits(42, 7, 1000), rng::bits(42, 7, 1001));

    // A fill is a function of (seed, stream, index) alone, whatever the thread split.
    std::vector<float> a(200000), b(200000);
    rng::fill_uniform(a, 123, 4, -1.0f, 1.0f);
    rng::fill_uniform(b, 123, 4, -1.0f, 1.0f);
    EXPECT_EQ(a, b);
    for (size_t i : {size_t{0}, size_t{1}, size_t{65537}, size_t{199999}})
        EXPECT_EQ(a[i], static_cast<float>(-1.0 + 2.0 * rng::uniform(123, 4, i))) << i;
    std::vector<float> prefix(1000);
    rng::fill_uniform(prefix, 123, 4, -1.0f, 1.0f);
    EXPECT_TRUE(std::equal(prefix.begin(), prefix.end(), a.begin()));
}

TEST(Core, RngStreamsAreIndependent) {
    constexpr size_t n = 200000;
    std::vector<float> s0(n), s1(n), other_seed(n);
    rng::fill_normal(s0, 99, 0, 0.0f, 1.0f);
    rng::fill_normal(s1, 99, 1, 0.0f, 1.0f);
    rng::fill_normal(other_seed, 100, 0, 0.0f, 1.0f);
    auto correlation = [&](const std::vector<float>& x, const std::vector<float>& y) {
        double sxy = 0, sxx = 0, syy = 0, mx = 0, my = 0;
        for (size_t i = 0; i < n; ++i) mx += x[i], my += y[i];
        mx /= n, my /= n;
        for (size_t i = 0; i < n; ++i) {
            sxy += (x[i] - mx) * (y[i] - my);
            sxx += (x[i] - mx) * (x[i] - mx);
            syy += (y[i] - my) * (y[i] - my);
        }
        return sxy / std::sqrt(sxx * syy);
    };
    // Independent samples of 2e5: |r| has a standard deviation of about 0.0022.
    EXPECT_LT(std::abs(correlation(s0, s1)), 0.015);
    EXPECT_LT(std::abs(correlation(s0, other_seed)), 0.015);
    // Neighbouring indices of one stream are not correlated either.
    std::vector<float> shifted(s0.begin() + 1, s0.end());
    shifted.push_back(s0.front());
    EXPECT_LT(std::abs(correlation(s0, shifted)), 0.015);

    size_t same = 0;
    for (size_t i = 0; i < n; ++i) same += s0[i] == s1[i];
    EXPECT_LT(same, 10u);
}

TEST(Core, FillNormalHasTheRequestedMoments) {
    constexpr size_t n = 1000000;
    std::vector<float> v(n);
    rng::fill_normal(v, 2024, 3, 3.0f, 2.0f);
    double mean = 0;
    for (float x : v) mean += x;
    mean /= n;
    double var = 0, fourth = 0;
    for (float x : v) {
        const double d = x - mean;
        var += d * d;
        fourth += d * d * d * d;
    }
    var /= (n - 1);
    fourth /= n;
    // Standard error of the mean is 2 / 1000; of the standard deviation about 2 / 1414.
    EXPECT_NEAR(mean, 3.0, 0.01);
    EXPECT_NEAR(std::sqrt(var), 2.0, 0.01);
    // Kurtosis of a normal is 3 (a uniform would give 1.8): the shape is right, not just the scale.
    EXPECT_NEAR(fourth / (var * var), 3.0, 0.05);
    for (float x : v) ASSERT_TRUE(std::isfinite(x));
}

TEST(Core, FillUniformStaysInBounds) {
    constexpr size_t n = 1000000;
    std::vector<float> v(n);
    rng::fill_uniform(v, 7, 0, -2.0f, 5.0f);
    float lo = v[0], hi = v[0];
    double mean = 0;
    for (float x : v) {
        lo = std::min(lo, x);
        hi = std::max(hi, x);
        mean += x;
    }
    mean /= n;
    EXPECT_GE(lo, -2.0f);
    EXPECT_LE(hi, 5.0f);
    EXPECT_LT(lo, -1.99f);  // the whole range is covered
    EXPECT_GT(hi, 4.99f);
    EXPECT_NEAR(mean, 1.5, 0.01);

    for (uint64_t i = 0; i < 100000; ++i) {
        const double u = rng::uniform(5, 6, i);
        ASSERT_GE(u, 0.0);
        ASSERT_LT(u, 1.0);
    }
}

TEST(Core, FreshSeedsDiffer) {
    std::set<uint64_t> seeds;
    for (int i = 0; i < 16; ++i) seeds.insert(rng::fresh_seed());
    EXPECT_GT(seeds.size(), 14u);
}

// ---- hash ----

TEST(Core, HashIsStable) {
    // Pinned values: cached references and compiled modules on disk are keyed by these hashes,
    // so a change here silently invalidates (or, worse, aliases) every cache.
    EXPECT_EQ(hex64(hash64("")), "c3817c016ba4ff30");
    EXPECT_EQ(hex64(hash64("kevo")), "3cd2eecf207cfbd8");
    EXPECT_EQ(hex64(hash64("__global__ void k(float* x) { x[0] = 1; }")), "b6e63112e8b8862a");
    EXPECT_EQ(hex64(hash64("kevo", 1)), "f45b08b0453b1fc1");
    EXPECT_EQ(hash64("kevo"), hash64("kevo"));
    const std::string text = "some bytes";
    EXPECT_EQ(hash64(text), hash_bytes(text.data(), text.size()));
}

TEST(Core, HashIsSensitive) {
    EXPECT_NE(hash64("kevo"), hash64("kevp"));
    EXPECT_NE(hash64("kevo"), hash64("Kevo"));
    EXPECT_NE(hash64("kevo"), hash64("kevo", 1));
    EXPECT_NE(hash64(""), hash64(std::string(1, '\0')));
    EXPECT_NE(hash64(std::string(8, '\0')), hash64(std::string(9, '\0')));
    EXPECT_NE(hash64(std::string(7, '\0')), hash64(std::string(8, '\0')));
    EXPECT_NE(hash64("ab"), hash64("ba"));

    // Every single-bit flip of a 40-byte message (both the 8-byte and the tail path) changes it.
    std::string message = "0123456789abcdefghijklmnopqrstuvwxyz!@#$";
    const uint64_t base = hash64(message);
    std::set<uint64_t> seen{base};
    for (size_t byte = 0; byte < message.size(); ++byte)
        for (int bit = 0; bit < 8; ++bit) {
            std::string flipped = message;
            flipped[byte] = static_cast<char>(flipped[byte] ^ (1 << bit));
            seen.insert(hash64(flipped));
        }
    EXPECT_EQ(seen.size(), 1 + message.size() * 8);
}

TEST(Core, Hex64HasSixteenLowercaseDigits) {
    EXPECT_EQ(hex64(0), "0000000000000000");
    EXPECT_EQ(hex64(0xABCDEFull), "0000000000abcdef");
    EXPECT_EQ(hex64(~0ull), "ffffffffffffffff");
}

// ---- files ----

TEST(Core, WriteAtomicAndReadRoundTrip) {
    TempDir dir;
    const fs::path path = dir.path() / "nested" / "deeper" / "file.bin";
    std::string contents = "line one\nline two\n";
    contents.push_back('\0');
    contents += "\xff\x01 binary tail";
    auto written = write_file_atomic(path, contents);
    ASSERT_TRUE(written.has_value()) << written.error().message;
    auto read = read_text_file(path);
    ASSERT_TRUE(read.has_value()) << read.error().message;
    EXPECT_EQ(*read, contents);

    // Overwriting replaces the whole file, and no temporary file is left behind.
    ASSERT_TRUE(write_file_atomic(path, "short").has_value());
    auto again = read_text_file(path);
    ASSERT_TRUE(again.has_value());
    EXPECT_EQ(*again, "short");
    size_t files = 0;
    for (const auto& entry : fs::directory_iterator(path.parent_path())) {
        ++files;
        EXPECT_EQ(entry.path().filename(), "file.bin");
    }
    EXPECT_EQ(files, 1u);

    ASSERT_TRUE(write_file_atomic(dir.path() / "empty", "").has_value());
    auto empty = read_text_file(dir.path() / "empty");
    ASSERT_TRUE(empty.has_value());
    EXPECT_EQ(*empty, "");
}

TEST(Core, ReadTextFileErrors) {
    TempDir dir;
    auto missing = read_text_file(dir.path() / "does-not-exist.cu");
    ASSERT_FALSE(missing.has_value());
    EXPECT_NE(missing.error().message.find("does-not-exist.cu"), std::string::npos) << missing.error().message;
    EXPECT_NE(missing.error().message.find("no such file"), std::string::npos) << missing.error().message;

    auto directory = read_text_file(dir.path());
    ASSERT_FALSE(directory.has_value());
    EXPECT_NE(directory.error().message.find("directory"), std::string::npos) << directory.error().message;
}

TEST(Core, WriteAtomicReportsAnUnwritablePlace) {
    TempDir dir;
    // A regular file where a parent folder should be: the write cannot succeed.
    ASSERT_TRUE(write_file_atomic(dir.path() / "blocker", "x").has_value());
    auto result = write_file_atomic(dir.path() / "blocker" / "child.txt", "y");
    EXPECT_FALSE(result.has_value());
}

TEST(Core, CacheDirHonoursTheEnvironment) {
    TempDir dir;
    const char* previous = std::getenv("KEVO_CACHE_DIR");
    const std::string saved = previous ? previous : "";
    ::setenv("KEVO_CACHE_DIR", dir.path().c_str(), 1);
    const fs::path refs = cache_dir("references");
    if (previous) ::setenv("KEVO_CACHE_DIR", saved.c_str(), 1);
    else ::unsetenv("KEVO_CACHE_DIR");
    EXPECT_EQ(refs, dir.path() / "references");
    EXPECT_TRUE(fs::is_directory(refs));  // created on demand
}

}  // namespace
}  // namespace kevo
