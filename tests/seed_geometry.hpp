// Test helper: a seed's launch directives, read by the host's own parser, must declare exactly the
// task's default block for every kernel (through the first value of any knob they name), and every
// knob must have an #ifndef fallback so the seed also compiles without -D.
#pragma once

#include <algorithm>
#include <string>

#include <gtest/gtest.h>

#include "eval/directives.hpp"
#include "task/task.hpp"

namespace kevo::test {

inline void expect_seed_declares_default_geometry(const Task& task, const std::string& file, const std::string& seed) {
    const std::string where = task.spec().name + " " + file;
    auto d = parse_directives(seed);
    ASSERT_TRUE(d) << where << ": " << d.error().message;
    auto knobs = knob_values(*d, {});
    ASSERT_TRUE(knobs) << where << ": " << knobs.error().message;
    for (const auto& kernel : task.spec().kernels) {
        auto launch = std::find_if(d->launches.begin(), d->launches.end(),
                                   [&](const LaunchDirective& l) { return l.kernel == kernel.name; });
        ASSERT_NE(launch, d->launches.end()) << where << ": no launch directive for " << kernel.name;
        ASSERT_EQ(launch->block.size(), kernel.dims) << where << " " << kernel.name;
        auto geometry = resolve_geometry(*d, kernel, *knobs);
        ASSERT_TRUE(geometry) << where << ": " << geometry.error().message;
        EXPECT_EQ(geometry->block, kernel.default_block) << where << " " << kernel.name;
    }
    for (const auto& knob : d->knobs)
        EXPECT_NE(seed.find("#ifndef " + knob.name), std::string::npos) << where << " " << knob.name;
}

}  // namespace kevo::test
