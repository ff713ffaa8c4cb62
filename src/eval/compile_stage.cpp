// See compile_stage.hpp.
#include "eval/compile_stage.hpp"

#include <fmt/format.h>

#include "eval/compile_log.hpp"

namespace kevo {

Expected<Language> request_language(const EvalRequest& request, const std::string& backend) {
    return backend_language(request.language, backend);
}

namespace {

// The language's own compiler, given the task's kernels (Triton compiles each entry point by name).
Expected<CompileOutcome> compile_with_language(const TaskSpec& spec, const EvalRequest& request, Language language,
                                               const std::vector<std::string>& defines, const std::string& arch) {
    std::vector<KernelSignature> kernels;
    for (const auto& k : spec.kernels) kernels.push_back({k.name, k.params});
    const std::string source_name = request.source_name.empty() ? "candidate." + language->suffix : request.source_name;
    return language->compile(
        LanguageCompileRequest{request.source, source_name, defines, arch, kernels, request.compile_timeout_s});
}

}  // namespace

Expected<CompileStage> run_compile_stage(const TaskSpec& spec, const EvalRequest& request, Language language,
                                         const std::string& device_arch, const CompileFn& compile) {
    CompileStage out;
    out.language = language;
    auto reject = [&](std::string why) {
        out.verdict = Verdict::rejected;
        out.diagnostics = std::move(why);
        return out;
    };
    auto directives = parse_directives(request.source, language->directive_comment);
    if (!directives) return reject("launch directive: " + directives.error().message);
    out.directives = *directives;
    for (const auto& note : out.directives.notes) out.warnings.push_back(note);
    for (const auto& l : out.directives.launches) {
        bool known = false;
        for (const auto& k : spec.kernels) known |= k.name == l.kernel;
        if (!known)
            return reject(fmt::format("line {}: launch directive names '{}', which is not a kernel of task {}", l.line,
                                      l.kernel, spec.name));
    }
    auto arch = resolve_target(out.directives, language, device_arch);
    if (!arch) return reject(arch.error().message);
    auto knobs = knob_values(out.directives, request.defines);
    if (!knobs) return reject(knobs.error().message);
    out.knobs = *knobs;
    std::vector<std::string> defines;
    for (const auto& [name, value] : out.knobs) defines.push_back(name + "=" + value);

    auto outcome = language->compile
                       ? compile_with_language(spec, request, language, defines, arch->empty() ? device_arch : *arch)
                       : compile(request.source, defines, *arch);
    if (!outcome) return outcome.error();
    if (outcome->refused) return reject(*outcome->refused);
    const bool compiled = outcome->compiled();
    out.module = outcome->module;
    out.images = std::move(outcome->images);
    out.image_metadata = std::move(outcome->image_metadata);
    out.log = name_source_in_log(outcome->log, request.source_name);
    out.seconds = outcome->seconds;
    out.messages = parse_compile_log(out.log);
    if (!compiled) {
        std::string first;
        for (const auto& m : out.messages)
            if (m.severity == "error") {
                first = fmt::format("line {}: {}\n", m.line, m.message);
                break;
            }
        out.verdict = Verdict::compile_error;
        out.diagnostics = first + log_head(out.log);
    }
    return out;
}

}  // namespace kevo
