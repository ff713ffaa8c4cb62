// The launch contract a candidate declares in comments (DESIGN.md "Launch contract"):
//   // kevo: launch heat_step block=32,8 per_thread=1,4 grid=264 smem=98304
//   // kevo: tune TILE 16 32 64        (first value is the default; passed as -DTILE=value)
//   // kevo: target sm_90a              (CUDA: compile for the architecture-specific target)
// Parsing is syntax only; resolve_geometry substitutes knob values and fills task defaults.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "backend/backend.hpp"
#include "core/expected.hpp"
#include "task/task.hpp"

namespace kevo {

struct LaunchDirective {
    std::string kernel;
    // Raw components: integers or knob names, 1 to 3 each; empty when not given.
    std::vector<std::string> block, per_thread, grid;
    std::string smem;  // dynamic shared memory in bytes (an integer or a knob name); empty when not given
    int line = 0;
};

// `// kevo: target sm_90a`: the candidate opts into an architecture-specific target (wgmma,
// setmaxnreg), which runs only on a device of exactly that compute capability.
struct TargetDirective {
    std::string arch;  // "sm_90a"
    int line = 0;
};

struct TuneKnob {
    std::string name;
    std::vector<std::string> values;  // first is the default
    int line = 0;
};

struct Directives {
    std::vector<LaunchDirective> launches;
    std::vector<TuneKnob> knobs;
    std::optional<TargetDirective> target;
    // `// kevo: <word> ...` lines whose word is not a directive: ordinary comments, noted only.
    std::vector<std::string> notes;
};

// Only `// kevo: launch`, `// kevo: tune` and `// kevo: target` are directives; any other word after `kevo:` makes
// the line an ordinary comment (listed in `notes`). Errors (a directive with bad syntax) name the
// line and what was expected; they make a candidate "rejected".
// `comment` is what starts a comment line in the source's language (KernelLanguage::directive_comment).
Expected<Directives> parse_directives(std::string_view source, std::string_view comment = "//");

// Knob values in force: each knob's default unless overridden. Overriding a knob the source does
// not declare is an error (a typo would otherwise silently do nothing).
Expected<std::map<std::string, std::string>> knob_values(const Directives& d,
                                                         const std::map<std::string, std::string>& overrides);

struct Geometry {
    Dim3 block;
    Dim3 per_thread;
    std::optional<Dim3> grid;  // fixed block count, when declared
    uint64_t dynamic_shared_bytes = 0;  // smem=: the host raises the kernel's limit and launches with it
    // A kernel compiled ahead of time (KernelImage): its compiler fixes the threads per block, and
    // `block` is then the tile one block covers (what the grid divides the domain by).
    std::optional<Dim3> threads;
    unsigned null_args = 0;  // null pointers after the task's arguments (Triton's scratch parameters)
};

// The geometry of one kernel: the task default unless the candidate declares its own.
Expected<Geometry> resolve_geometry(const Directives& d, const KernelSpec& kernel,
                                    const std::map<std::string, std::string>& knobs);

// The architecture to compile for: empty for the device's own (`device_arch`, "sm_90"), or the
// declared target when it is one this device runs (sm_XYa on a device sm_XY). A target on a device
// of another capability, or in a language without such targets (OpenCL), is an error naming the
// device's capability; so is smem= in a language without dynamic shared memory (an OpenCL kernel
// sizes its __local arrays itself).
Expected<std::string> resolve_target(const Directives& d, Language language, const std::string& device_arch);

// Blocks per axis for a launch domain: ceil(ceil(domain / per_thread) / block), or the fixed grid.
Dim3 grid_for(const Geometry& g, const Dim3& domain);

// Checks a geometry against the device's limits and the compiled kernel's maximum block size, and
// its static plus dynamic shared memory against the device's opt-in limit per block.
// The message says which limit and by how much.
Expected<void> validate_geometry(const std::string& kernel, const Geometry& g, const DeviceInfo& device,
                                 const KernelAttributes& attributes);

std::string describe(const Dim3& d, unsigned dims);

}  // namespace kevo
