// See signature_check.hpp.
#include "eval/signature_check.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cctype>
#include <map>
#include <sstream>

namespace kevo {
namespace {

// One spelling per type: "unsigned int" and "unsigned" are "uint", "signed char" is "char".
std::string normalise_type(std::string type) {
    static const std::map<std::string, std::string> spellings = {
        {"unsigned int", "uint"},   {"unsigned", "uint"},       {"unsigned char", "uchar"}, {"signed char", "char"},
        {"unsigned short", "ushort"}, {"unsigned long", "ulong"}, {"signed int", "int"},    {"signed", "int"},
        {"long long", "long"},      {"unsigned long long", "ulong"}};
    if (auto it = spellings.find(type); it != spellings.end()) return it->second;
    return type;
}

// Integer types of one width read the same bits whatever their sign.
std::string sign_free(const std::string& type) {
    for (const char* t : {"uchar", "ushort", "uint", "ulong"})
        if (type == t) return type.substr(1);
    return type;
}

std::string address_space_word(std::string word) {
    if (word.starts_with("__")) word = word.substr(2);
    return word == "global" || word == "local" || word == "constant" || word == "private" ? word : std::string();
}

DeclaredParam parse_param(const std::string& text) {
    DeclaredParam p;
    std::string spaced;
    for (char c : text) spaced += c == '*' ? std::string(" * ") : std::string(1, c);
    std::istringstream words(spaced);
    std::vector<std::string> type_words;
    std::string word;
    while (words >> word) {
        if (word == "*") p.pointer = true;
        else if (word == "const") p.is_const = true;
        else if (auto space = address_space_word(word); !space.empty()) p.address_space = space;
        else if (word != "volatile" && word != "restrict" && word != "__restrict__" && word != "__restrict") type_words.push_back(word);
    }
    // The last word is the name when there is one besides the type.
    if (type_words.size() > 1) {
        p.name = type_words.back();
        type_words.pop_back();
    }
    p.type = normalise_type(fmt::format("{}", fmt::join(type_words, " ")));
    if (p.address_space.empty() && !p.pointer) p.address_space = "private";
    return p;
}

// The compiled parameter in the declared form (OpenCL type names end in '*' for pointers).
DeclaredParam from_compiled(const KernelParam& k) {
    DeclaredParam p;
    p.pointer = k.type_name.find('*') != std::string::npos;
    std::string type = k.type_name;
    while (!type.empty() && (type.back() == '*' || type.back() == ' ')) type.pop_back();
    p.type = normalise_type(type);
    p.address_space = k.address_space.empty() ? "private" : k.address_space;
    p.is_const = k.is_const;
    p.name = k.name;
    return p;
}

std::string opencl_text(const DeclaredParam& p) {
    std::string out = p.pointer ? p.address_space + " " : "";
    if (p.is_const) out += "const ";
    out += p.type + (p.pointer ? "*" : "");
    if (!p.name.empty()) out += " " + p.name;
    return out;
}

std::string opencl_list(const std::vector<DeclaredParam>& params) {
    std::vector<std::string> parts;
    for (const auto& p : params) parts.push_back(opencl_text(p));
    return fmt::format("({})", fmt::join(parts, ", "));
}

// The scalar kind of a vector type: float4 -> float. A pointer to float4 where the task passes a
// float buffer is a vectorised kernel reading the same memory, not a wrong signature.
std::string scalar_kind(const std::string& type) {
    const size_t end = type.find_last_not_of("0123456789");
    return sign_free(end == std::string::npos ? type : type.substr(0, end + 1));
}

bool same_opencl_param(const DeclaredParam& want, const DeclaredParam& got) {
    if (want.pointer != got.pointer) return false;
    if (want.pointer) return want.address_space == got.address_space && scalar_kind(want.type) == scalar_kind(got.type);
    return sign_free(want.type) == sign_free(got.type);
}

std::optional<std::string> typed_mismatch(const KernelSpec& kernel, const std::vector<DeclaredParam>& want,
                                           const KernelParams& compiled) {
    std::vector<DeclaredParam> got;
    for (const auto& k : compiled.params) got.push_back(from_compiled(k));
    bool same = got.size() == want.size();
    if (compiled.detailed)
        for (size_t i = 0; same && i < want.size(); ++i) same = same_opencl_param(want[i], got[i]);
    if (same) return std::nullopt;
    if (!compiled.detailed)
        return fmt::format("kernel '{}' takes {} parameter{} but the task passes {}: {}", kernel.name, got.size(),
                           got.size() == 1 ? "" : "s", want.size(), opencl_list(want));
    return fmt::format("kernel '{}' takes {} but the task passes {}", kernel.name, opencl_list(got), opencl_list(want));
}

// Bytes a task parameter occupies in CUDA's parameter layout.
uint64_t param_bytes(const SignatureParam& p) {
    if (p.kind != ParamKind::scalar) return 8;
    switch (p.type) {
        case ParamType::f32:
        case ParamType::u32:
        case ParamType::i32: return 4;
        case ParamType::f32x2: return 8;
        case ParamType::f32x4: return 16;
        case ParamType::i8:
        case ParamType::u8: return 1;
        case ParamType::bf16: return 2;
    }
    return 0;
}

// The sizes come from the task's parameters themselves, whatever the language's declaration looks
// like (a Triton def lists names and constexprs, not C types); the declaration only labels them
// where it is C (one declared parameter of the same name per task parameter).
std::optional<std::string> bytes_mismatch(const KernelSpec& kernel, const std::vector<DeclaredParam>& declared,
                                          const KernelParams& compiled) {
    bool same = compiled.params.size() == kernel.params.size();
    for (size_t i = 0; same && i < kernel.params.size(); ++i)
        same = compiled.params[i].bytes == 0 || param_bytes(kernel.params[i]) == compiled.params[i].bytes;
    if (same) return std::nullopt;
    bool labelled = declared.size() == kernel.params.size();
    for (size_t i = 0; labelled && i < declared.size(); ++i) labelled = declared[i].name == kernel.params[i].name;
    std::vector<std::string> got_sizes, wanted;
    for (const auto& k : compiled.params) got_sizes.push_back(fmt::format("{} B", k.bytes));
    for (size_t i = 0; i < kernel.params.size(); ++i) {
        const DeclaredParam* p = labelled ? &declared[i] : nullptr;
        const std::string text = p ? (p->is_const ? "const " : "") + p->type + (p->pointer ? "*" : "") + (p->name.empty() ? "" : " " + p->name)
                                   : kernel.params[i].name;
        wanted.push_back(fmt::format("{} [{} B]", text, param_bytes(kernel.params[i])));
    }
    return fmt::format("kernel '{}' takes {} parameter{} ({}) but the task passes {}: ({})", kernel.name,
                       compiled.params.size(), compiled.params.size() == 1 ? "" : "s", fmt::join(got_sizes, ", "),
                       kernel.params.size(), fmt::join(wanted, ", "));
}

}  // namespace

std::vector<DeclaredParam> parse_signature(std::string_view declaration) {
    std::vector<DeclaredParam> params;
    const size_t open = declaration.find('('), close = declaration.rfind(')');
    if (open == std::string_view::npos || close == std::string_view::npos || close < open) return params;
    const std::string inside(declaration.substr(open + 1, close - open - 1));
    if (inside.find_first_not_of(" \t\n") == std::string::npos || inside == "void") return params;
    std::istringstream parts(inside);
    std::string part;
    while (std::getline(parts, part, ',')) params.push_back(parse_param(part));
    return params;
}

std::optional<std::string> signature_mismatch(const KernelSpec& kernel, Language language, const KernelParams& compiled) {
    const std::string declared = signature_text(kernel, language);
    if (!compiled.known || declared.empty()) return std::nullopt;
    const auto want = parse_signature(declared);
    switch (language->signature_check) {
        case SignatureCheck::parameter_bytes: return bytes_mismatch(kernel, want, compiled);
        case SignatureCheck::typed_parameters: return typed_mismatch(kernel, want, compiled);
    }
    return std::nullopt;
}

}  // namespace kevo
