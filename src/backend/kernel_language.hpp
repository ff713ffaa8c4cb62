// Kernel languages as data: a KernelLanguage describes one language a candidate may be written in
// (its file suffix, the answer parser's fences, the prompt's wording, directive syntax, scan rules,
// how a task's signature reads in it, which backend compiles it), and `Language` is a handle on a
// registered one. Each backend registers its own descriptors from its folder
// (src/backends/<b>/<b>_language.cpp); everything above looks languages up by name or suffix
// instead of naming CUDA or OpenCL.
#pragma once

#include <cassert>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/expected.hpp"

namespace kevo {

// A task's kernel signature, stated once in a language-neutral form; each language renders it.
enum class ParamType { f32, f32x2, f32x4, u32, i32, i8, u8, bf16 };
enum class ParamKind { const_pointer, pointer, scalar };

struct SignatureParam {
    std::string name;
    ParamType type = ParamType::f32;
    ParamKind kind = ParamKind::scalar;
    bool operator==(const SignatureParam&) const = default;
};

// Short constructors for the task specs: sig::const_ptr("x", ParamType::f32) is a pointer the kernel
// only reads, sig::ptr one it may write, sig::value a scalar passed by value.
namespace sig {
inline SignatureParam const_ptr(std::string name, ParamType type) { return {std::move(name), type, ParamKind::const_pointer}; }
inline SignatureParam ptr(std::string name, ParamType type) { return {std::move(name), type, ParamKind::pointer}; }
inline SignatureParam value(std::string name, ParamType type) { return {std::move(name), type, ParamKind::scalar}; }
}  // namespace sig

// How a compiled kernel's parameter list is compared with the declared one (eval/signature_check):
// by size in bytes only (what CUDA's cuFuncGetParamInfo gives), or by address space and type
// (OpenCL's kernel-arg info).
enum class SignatureCheck { parameter_bytes, typed_parameters };

// What the static scan (eval/static_scan) refuses and flags in a C-family kernel language.
struct ScanRules {
    std::vector<std::string> include_allow_list;  // headers a candidate may include; all others are refused
    std::vector<std::string> launch_calls;        // device-side launch calls, refused
    std::string launch_calls_what;                // how the refusal names them: "dynamic parallelism"
    bool refuse_chevron_launch = false;           // `<<<` (a CUDA launch from device code)
    std::vector<std::string> global_words;        // words that declare device globals (warned about when mutable)
    bool globals_at_file_scope_only = false;      // a global word counts only outside braces (OpenCL's `global`)
};

// One kernel of a task as a language's own compiler needs it: its entry name and declared parameters.
struct KernelSignature {
    std::string name;
    std::vector<SignatureParam> params;
};

// What a language with its own compiler (KernelLanguage::compile) is given: the candidate, its knob
// values ("NAME=VALUE"), the architecture ("sm_90"), the task's kernels and the deadline.
struct LanguageCompileRequest {
    std::string_view source;
    std::string_view source_name;  // named in the compiler's messages
    const std::vector<std::string>& defines;
    std::string arch;
    const std::vector<KernelSignature>& kernels;
    double timeout_s = 60;
};

struct CompileOutcome;  // backend/backend.hpp

struct KernelLanguage {
    std::string name;          // "cuda": the name used on the command line and in stored settings
    std::string display_name;  // "CUDA C++": the prompt's and messages' wording
    std::string short_name;    // "CUDA": "the fenced code holds a CUDA kernel"
    std::string suffix;        // "cu": the file suffix of a candidate (no dot)
    std::string backend;       // "cuda": the backend that compiles it
    bool backend_default = false;  // the language the backend's devices compile unless told otherwise

    std::string fence_tag;                // the tag the prompt writes on its code blocks
    std::vector<std::string> fence_tags;  // tags (lower case) under which an answer's block may hold this language
    std::vector<std::string> kernel_markers;  // a block holds a kernel of this language when it contains one

    std::string directive_comment = "//";  // what starts a `kevo:` directive line (and any line comment)
    // How a `kevo: tune NAME ...` knob reaches the kernel, for the prompt ("compiled in as -DNAME=value").
    std::string knob_binding = "compiled in as -DNAME=value";
    std::string launch_note;  // what a launch directive means in this language beyond the common rules (the prompt)
    bool arch_targets = false;    // `kevo: target sm_90a` is allowed
    bool dynamic_shared = false;  // `smem=` is allowed in launch directives
    std::string no_arch_targets_note;  // why not, when arch_targets is false
    std::string no_dynamic_shared_note;  // why not, when dynamic_shared is false

    // The C-family scan (includes, launches, globals) applies; a language that is not C (Triton)
    // checks its own syntax tree in its compiler instead, before any of the candidate runs.
    bool c_family = true;
    ScanRules scan;
    SignatureCheck signature_check = SignatureCheck::typed_parameters;
    // The declaration of kernel `name` taking `params`, as it must appear in a source of this language.
    std::string (*render_signature)(std::string_view name, const std::vector<SignatureParam>& params) = nullptr;
    // The language's own compiler, run on the host ahead of time: it yields a binary image
    // (CompileOutcome::image) that the backend's device loads. Null: the device's compiler (NVRTC,
    // the OpenCL runtime) compiles the source itself. Errors are environment faults only.
    Expected<CompileOutcome> (*compile)(const LanguageCompileRequest& request) = nullptr;
};

// A handle on a registered language; compares by identity. A default handle names none and may
// only be assigned or tested.
class Language {
public:
    Language() = default;
    explicit Language(const KernelLanguage* descriptor) : d_(descriptor) {}

    const KernelLanguage& operator*() const { assert(d_); return *d_; }
    const KernelLanguage* operator->() const { assert(d_); return d_; }
    explicit operator bool() const { return d_ != nullptr; }
    bool operator==(const Language&) const = default;

    const std::string& name() const { return (*this)->name; }
    const std::string& suffix() const { return (*this)->suffix; }

private:
    const KernelLanguage* d_ = nullptr;
};

// Registers a language at static initialisation (one line in the backend's folder:
// `const bool registered = register_language(make_x_language());`). Asserts that its name and
// suffix are new.
bool register_language(KernelLanguage language);

// Every registered language, sorted by name; their names.
std::vector<Language> languages();
std::vector<std::string> language_names();
// A default handle when there is none.
Language language_named(std::string_view name);
Language language_for_suffix(std::string_view suffix);  // "cu" (no dot)
// The language a backend's devices compile by default; a default handle for an unknown backend.
Language default_language_of(std::string_view backend);
// Language `name` of `backend` (empty: the backend's default), or an error naming the languages the
// backend compiles.
Expected<Language> backend_language(std::string_view name, std::string_view backend);

// Kept for the callers that print a language or build a file name.
inline const char* language_suffix(Language language) { return language->suffix.c_str(); }
inline const char* language_name(Language language) { return language->display_name.c_str(); }

// The declaration of a kernel in `language`.
inline std::string render_signature(Language language, std::string_view name, const std::vector<SignatureParam>& params) {
    return language->render_signature(name, params);
}

}  // namespace kevo
