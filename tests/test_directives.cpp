// Tests of the `// kevo:` launch and tune directives: parsing, error messages with line numbers,
// knob values, geometry resolution, grid sizing and validation against device and kernel limits.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "directive_support.hpp"
#include "eval/directives.hpp"

namespace kevo {
namespace {

using Parts = std::vector<std::string>;

using test::parse_error;
using test::parse_ok;

KernelSpec kernel_spec(std::string name, Dim3 default_block, unsigned dims = 2) {
    KernelSpec k;
    k.name = std::move(name);
    k.dims = dims;
    k.default_block = default_block;
    return k;
}

TEST(Directives, ParsesLaunchWithOneToThreeComponents) {
    const auto d = parse_ok(
        "// kevo: launch heat_step block=32,8 per_thread=1,4 grid=264\n"
        "__global__ void heat_step(float* u) {}\n"
        "//kevo: launch cube block=8,4,2 per_thread=2,2,2 grid=3,5,7\n"
        "int x;  // kevo: launch line_kernel block=256\n");
    ASSERT_EQ(d.launches.size(), 3u);
    EXPECT_EQ(d.launches[0].kernel, "heat_step");
    EXPECT_EQ(d.launches[0].block, (Parts{"32", "8"}));
    EXPECT_EQ(d.launches[0].per_thread, (Parts{"1", "4"}));
    EXPECT_EQ(d.launches[0].grid, (Parts{"264"}));
    EXPECT_EQ(d.launches[0].line, 1);

    EXPECT_EQ(d.launches[1].kernel, "cube");
    EXPECT_EQ(d.launches[1].block, (Parts{"8", "4", "2"}));
    EXPECT_EQ(d.launches[1].per_thread, (Parts{"2", "2", "2"}));
    EXPECT_EQ(d.launches[1].grid, (Parts{"3", "5", "7"}));
    EXPECT_EQ(d.launches[1].line, 3);

    // A directive after code on the same line still counts; keys it omits stay empty.
    EXPECT_EQ(d.launches[2].kernel, "line_kernel");
    EXPECT_EQ(d.launches[2].block, (Parts{"256"}));
    EXPECT_TRUE(d.launches[2].per_thread.empty());
    EXPECT_TRUE(d.launches[2].grid.empty());
    EXPECT_EQ(d.launches[2].line, 4);
    EXPECT_TRUE(d.knobs.empty());
}

TEST(Directives, ParsesKnobNamesAsValuesAndTuneLines) {
    const auto d = parse_ok(
        "// kevo: tune TILE 16 32 64\n"
        "// kevo: tune UNROLL 4\n"
        "// kevo: launch heat_step block=TILE,BY per_thread=1,UNROLL\n"
        "// kevo: tune BY 8 16\n");
    ASSERT_EQ(d.launches.size(), 1u);
    EXPECT_EQ(d.launches[0].block, (Parts{"TILE", "BY"}));
    EXPECT_EQ(d.launches[0].per_thread, (Parts{"1", "UNROLL"}));
    EXPECT_EQ(d.launches[0].line, 3);
    ASSERT_EQ(d.knobs.size(), 3u);
    EXPECT_EQ(d.knobs[0].name, "TILE");
    EXPECT_EQ(d.knobs[0].values, (Parts{"16", "32", "64"}));
    EXPECT_EQ(d.knobs[0].line, 1);
    EXPECT_EQ(d.knobs[1].name, "UNROLL");
    EXPECT_EQ(d.knobs[1].values, (Parts{"4"}));
    EXPECT_EQ(d.knobs[2].name, "BY");
    EXPECT_EQ(d.knobs[2].line, 4);
}

TEST(Directives, IgnoresOrdinaryComments) {
    const auto d = parse_ok(
        "// a comment that mentions kevo but is not a directive\n"
        "/* kevo: launch in a block comment is not a directive */\n"
        "__global__ void k() {}\n");
    EXPECT_TRUE(d.launches.empty());
    EXPECT_TRUE(d.knobs.empty());
}

// Only `kevo: launch` and `kevo: tune` are directives: any other word after `kevo:` is prose, read
// as a comment and noted with its line (a misspelt directive is then seen, not silently dropped).
TEST(Directives, AnUnknownWordAfterKevoIsAnOrdinaryCommentWithANote) {
    const auto d = parse_ok("// kevo: this kernel is naive\n__global__ void k() {}\n// kevo: lunch k block=32\n");
    EXPECT_TRUE(d.launches.empty());
    ASSERT_EQ(d.notes.size(), 2u);
    EXPECT_NE(d.notes[0].find("line 1"), std::string::npos) << d.notes[0];
    EXPECT_NE(d.notes[0].find("`// kevo: this` is not a directive"), std::string::npos) << d.notes[0];
    EXPECT_NE(d.notes[1].find("line 3"), std::string::npos) << d.notes[1];
    EXPECT_NE(d.notes[1].find("lunch"), std::string::npos) << d.notes[1];
}

// A known directive with bad syntax is still an error, beside a prose `kevo:` comment.
TEST(Directives, AKnownDirectiveWithBadSyntaxIsStillAnError) {
    const auto error = parse_error("// kevo: note the halo\n// kevo: launch k block=0\n");
    EXPECT_NE(error.find("line 2"), std::string::npos) << error;
    EXPECT_NE(error.find("block value '0'"), std::string::npos) << error;
}

TEST(Directives, UnknownKeyNamesTheLineAndKey) {
    const auto error = parse_error("\n\n// kevo: launch k block=32 threads=4\n");
    EXPECT_NE(error.find("line 3"), std::string::npos) << error;
    EXPECT_NE(error.find("threads"), std::string::npos) << error;
}

TEST(Directives, MissingEqualsIsAnError) {
    const auto error = parse_error("// kevo: launch k block 32\n");
    EXPECT_NE(error.find("line 1"), std::string::npos) << error;
    EXPECT_NE(error.find("KEY=VALUE"), std::string::npos) << error;
}

TEST(Directives, ZeroNegativeAndEmptyValuesAreErrors) {
    for (const char* source : {"// kevo: launch k block=0\n", "// kevo: launch k block=32,0\n",
                               "// kevo: launch k per_thread=-4\n", "// kevo: launch k grid=-1,2\n",
                               "// kevo: launch k block=\n", "// kevo: launch k block=32,,8\n",
                               "// kevo: launch k block=3.5\n"}) {
        SCOPED_TRACE(source);
        const auto error = parse_error(source);
        EXPECT_NE(error.find("line 1"), std::string::npos) << error;
    }
}

TEST(Directives, FourComponentsAreAnError) {
    const auto error = parse_error("\n// kevo: launch k block=1,2,3,4\n");
    EXPECT_NE(error.find("line 2"), std::string::npos) << error;
    EXPECT_NE(error.find("1 to 3"), std::string::npos) << error;
}

TEST(Directives, DuplicateKernelNamesBothLines) {
    const auto error = parse_error("// kevo: launch k block=32\n\n// kevo: launch k block=64\n");
    EXPECT_NE(error.find("line 3"), std::string::npos) << error;
    EXPECT_NE(error.find("line 1"), std::string::npos) << error;  // where the first one is
}

TEST(Directives, DuplicateKnobNamesBothLines) {
    const auto error = parse_error("// kevo: tune TILE 16 32\n// kevo: tune TILE 64\n");
    EXPECT_NE(error.find("line 2"), std::string::npos) << error;
    EXPECT_NE(error.find("line 1"), std::string::npos) << error;
    EXPECT_NE(error.find("TILE"), std::string::npos) << error;
}

TEST(Directives, KnobWithoutValuesIsAnError) {
    const auto error = parse_error("\n\n\n// kevo: tune TILE\n");
    EXPECT_NE(error.find("line 4"), std::string::npos) << error;
    EXPECT_NE(error.find("TILE"), std::string::npos) << error;
}

TEST(Directives, MissingNamesAreErrors) {
    EXPECT_NE(parse_error("// kevo: launch\n").find("line 1"), std::string::npos);
    EXPECT_NE(parse_error("// kevo: launch 3k block=1\n").find("line 1"), std::string::npos);
    EXPECT_NE(parse_error("// kevo: tune\n").find("line 1"), std::string::npos);
    // A knob value goes onto a -D command line: shell or preprocessor syntax is refused.
    EXPECT_NE(parse_error("// kevo: tune T 16;rm\n").find("line 1"), std::string::npos);
}

TEST(Directives, KnobValuesDefaultToTheFirstValue) {
    const auto d = parse_ok("// kevo: tune TILE 16 32 64\n// kevo: tune MODE fast exact\n");
    auto values = knob_values(d, {});
    ASSERT_TRUE(values.has_value()) << values.error().message;
    EXPECT_EQ(*values, (std::map<std::string, std::string>{{"MODE", "fast"}, {"TILE", "16"}}));

    auto overridden = knob_values(d, {{"TILE", "64"}});
    ASSERT_TRUE(overridden.has_value()) << overridden.error().message;
    EXPECT_EQ(overridden->at("TILE"), "64");
    EXPECT_EQ(overridden->at("MODE"), "fast");
}

TEST(Directives, OverridingAnUndeclaredKnobIsAnError) {
    const auto d = parse_ok("// kevo: tune TILE 16 32\n");
    auto values = knob_values(d, {{"TILES", "32"}});
    ASSERT_FALSE(values.has_value());
    EXPECT_NE(values.error().message.find("TILES"), std::string::npos) << values.error().message;
    EXPECT_NE(values.error().message.find("TILE"), std::string::npos) << values.error().message;

    auto none = knob_values(Directives{}, {{"TILE", "32"}});
    EXPECT_FALSE(none.has_value());
}

TEST(Directives, ResolveUsesTheTaskDefaultWithoutADirective) {
    const auto d = parse_ok("// kevo: launch other_kernel block=64\n");
    auto g = resolve_geometry(d, kernel_spec("heat_step", Dim3{32, 8, 1}), {});
    ASSERT_TRUE(g.has_value()) << g.error().message;
    EXPECT_EQ(g->block, (Dim3{32, 8, 1}));
    EXPECT_EQ(g->per_thread, (Dim3{1, 1, 1}));
    EXPECT_FALSE(g->grid.has_value());
}

TEST(Directives, ResolveSubstitutesKnobs) {
    const auto d = parse_ok(
        "// kevo: tune TILE 16 32\n"
        "// kevo: tune ROWS 4\n"
        "// kevo: launch heat_step block=TILE,8 per_thread=1,ROWS\n"
        "// kevo: launch reduce block=256 grid=TILE\n");
    auto knobs = knob_values(d, {{"TILE", "32"}});
    ASSERT_TRUE(knobs.has_value());

    auto g = resolve_geometry(d, kernel_spec("heat_step", Dim3{16, 16, 1}), *knobs);
    ASSERT_TRUE(g.has_value()) << g.error().message;
    EXPECT_EQ(g->block, (Dim3{32, 8, 1}));
    EXPECT_EQ(g->per_thread, (Dim3{1, 4, 1}));
    EXPECT_FALSE(g->grid.has_value());

    // A directive that names only some keys keeps the task default block when it omits block=.
    auto r = resolve_geometry(d, kernel_spec("reduce", Dim3{128, 1, 1}, 1), *knobs);
    ASSERT_TRUE(r.has_value()) << r.error().message;
    EXPECT_EQ(r->block, (Dim3{256, 1, 1}));
    ASSERT_TRUE(r->grid.has_value());
    EXPECT_EQ(*r->grid, (Dim3{32, 1, 1}));
}

// A value may be a product of knobs and numbers: a geometry that follows from two knobs (hmc's CB
// chains per block = PT x G) or a shared-memory size from a tile's knobs needs no knob of its own.
TEST(Directives, ProductsOfKnobsAndNumbersResolveToTheirValue) {
    const auto d = parse_ok(
        "// kevo: tune G 8 4\n"
        "// kevo: tune PT 4 2\n"
        "// kevo: tune STAGES 3 4\n"
        "// kevo: launch hmc_step block=G,PT*G per_thread=PT smem=STAGES*2*8192\n");
    auto knobs = knob_values(d, {{"G", "4"}, {"PT", "2"}});
    ASSERT_TRUE(knobs.has_value());
    auto g = resolve_geometry(d, kernel_spec("hmc_step", Dim3{8, 32, 1}), *knobs);
    ASSERT_TRUE(g.has_value()) << g.error().message;
    EXPECT_EQ(g->block, (Dim3{4, 8, 1}));
    EXPECT_EQ(g->per_thread, (Dim3{2, 1, 1}));
    EXPECT_EQ(g->dynamic_shared_bytes, 3u * 2u * 8192u);

    // A factor that is not a knob is named; so is a malformed product, on its line.
    const auto typo = parse_ok("// kevo: tune G 8\n// kevo: launch hmc_step block=G,PTX*G\n");
    auto typo_knobs = knob_values(typo, {});
    ASSERT_TRUE(typo_knobs.has_value());
    auto bad = resolve_geometry(typo, kernel_spec("hmc_step", Dim3{8, 32, 1}), *typo_knobs);
    ASSERT_FALSE(bad.has_value());
    EXPECT_NE(bad.error().message.find("block of 'hmc_step' names 'PTX', which is not a declared knob"), std::string::npos)
        << bad.error().message;
    for (const char* source : {"// kevo: launch k block=G*\n", "// kevo: launch k block=*4\n", "// kevo: launch k block=2**4\n",
                               "// kevo: launch k smem=4*0\n", "// kevo: launch k block=G+1\n"}) {
        SCOPED_TRACE(source);
        const auto error = parse_error(source);
        EXPECT_NE(error.find("line 1"), std::string::npos) << error;
        EXPECT_NE(error.find("product"), std::string::npos) << error;
    }
    // A product beyond any device is an error, not a wrapped-around number.
    auto huge = resolve_geometry(parse_ok("// kevo: launch k grid=1048576*1048576*1048576\n"), kernel_spec("k", Dim3{64, 1, 1}, 1), {});
    ASSERT_FALSE(huge.has_value());
    EXPECT_NE(huge.error().message.find("too large"), std::string::npos) << huge.error().message;
}

TEST(Directives, ResolveRefusesAnUndeclaredKnobName) {
    const auto d = parse_ok("// kevo: tune TILE 16\n// kevo: launch heat_step block=TILEX,8\n");
    auto knobs = knob_values(d, {});
    ASSERT_TRUE(knobs.has_value());
    auto g = resolve_geometry(d, kernel_spec("heat_step", Dim3{16, 16, 1}), *knobs);
    ASSERT_FALSE(g.has_value());
    EXPECT_NE(g.error().message.find("TILEX"), std::string::npos) << g.error().message;
    EXPECT_NE(g.error().message.find("heat_step"), std::string::npos) << g.error().message;
}

TEST(Directives, ResolveRefusesANonNumericKnobValueInGeometry) {
    const auto d = parse_ok("// kevo: tune MODE fast\n// kevo: launch k block=MODE\n");
    auto knobs = knob_values(d, {});
    ASSERT_TRUE(knobs.has_value());
    auto g = resolve_geometry(d, kernel_spec("k", Dim3{64, 1, 1}, 1), *knobs);
    ASSERT_FALSE(g.has_value());
    EXPECT_NE(g.error().message.find("fast"), std::string::npos) << g.error().message;
}

TEST(Directives, GridForRoundsUp) {
    Geometry g{Dim3{8, 1, 1}, Dim3{3, 1, 1}, std::nullopt};
    // ceil(100 / 3) = 34 threads, ceil(34 / 8) = 5 blocks.
    EXPECT_EQ(grid_for(g, Dim3{100, 1, 1}), (Dim3{5, 1, 1}));
    EXPECT_EQ(grid_for(g, Dim3{96, 1, 1}), (Dim3{4, 1, 1}));   // exact: 32 threads, 4 blocks
    EXPECT_EQ(grid_for(g, Dim3{97, 1, 1}), (Dim3{5, 1, 1}));   // one cell over: one block more

    Geometry g2{Dim3{32, 8, 1}, Dim3{1, 4, 1}, std::nullopt};
    // x: ceil(1000/32) = 32; y: ceil(ceil(1000/4)/8) = ceil(250/8) = 32.
    EXPECT_EQ(grid_for(g2, Dim3{1000, 1000, 1}), (Dim3{32, 32, 1}));
    EXPECT_EQ(grid_for(g2, Dim3{1, 1, 1}), (Dim3{1, 1, 1}));
}

TEST(Directives, GridForHonoursAFixedGrid) {
    Geometry g{Dim3{256, 1, 1}, Dim3{1, 1, 1}, Dim3{264, 1, 1}};
    EXPECT_EQ(grid_for(g, Dim3{1 << 24, 1, 1}), (Dim3{264, 1, 1}));
    EXPECT_EQ(grid_for(g, Dim3{10, 1, 1}), (Dim3{264, 1, 1}));
}

DeviceInfo device_with_limits() {
    DeviceInfo device;
    device.max_threads_per_block = 1024;
    device.max_block = {1024, 1024, 64};
    return device;
}

TEST(Directives, ValidateAcceptsAFittingBlock) {
    KernelAttributes attributes;
    attributes.max_threads = 1024;
    Geometry g{Dim3{32, 32, 1}, Dim3{}, std::nullopt};
    auto ok = validate_geometry("heat_step", g, device_with_limits(), attributes);
    EXPECT_TRUE(ok.has_value()) << ok.error().message;
}

TEST(Directives, ValidateRejectsABlockOverTheDeviceMaximum) {
    KernelAttributes attributes;
    attributes.max_threads = 1024;
    Geometry g{Dim3{64, 32, 1}, Dim3{}, std::nullopt};
    auto result = validate_geometry("heat_step", g, device_with_limits(), attributes);
    ASSERT_FALSE(result.has_value());
    const auto& message = result.error().message;
    EXPECT_NE(message.find("2048"), std::string::npos) << message;
    EXPECT_NE(message.find("1024"), std::string::npos) << message;
    EXPECT_NE(message.find("heat_step"), std::string::npos) << message;
    EXPECT_NE(message.find("device"), std::string::npos) << message;
}

TEST(Directives, ValidateRejectsABlockOverTheKernelMaximum) {
    KernelAttributes attributes;
    attributes.max_threads = 256;
    attributes.registers = 128;
    Geometry g{Dim3{32, 16, 1}, Dim3{}, std::nullopt};
    auto result = validate_geometry("heat_step", g, device_with_limits(), attributes);
    ASSERT_FALSE(result.has_value());
    const auto& message = result.error().message;
    EXPECT_NE(message.find("512"), std::string::npos) << message;
    EXPECT_NE(message.find("256"), std::string::npos) << message;
    EXPECT_NE(message.find("kernel"), std::string::npos) << message;
}

TEST(Directives, ValidateRejectsAnAxisOverTheDeviceMaximum) {
    KernelAttributes attributes;
    Geometry g{Dim3{1, 1, 128}, Dim3{}, std::nullopt};
    auto result = validate_geometry("cube", g, device_with_limits(), attributes);
    ASSERT_FALSE(result.has_value());
    const auto& message = result.error().message;
    EXPECT_NE(message.find("128"), std::string::npos) << message;
    EXPECT_NE(message.find("64"), std::string::npos) << message;
}

TEST(Directives, DescribeUsesTheDimensions) {
    EXPECT_EQ(describe(Dim3{256, 1, 1}, 1), "256");
    EXPECT_EQ(describe(Dim3{32, 8, 1}, 2), "32x8");
    EXPECT_EQ(describe(Dim3{8, 4, 2}, 3), "8x4x2");
    EXPECT_EQ(describe(Dim3{32, 8, 1}, 1), "32x8");  // a non-trivial axis is never hidden
}

}  // namespace
}  // namespace kevo
