# kevo's Triton compiler driver, run by src/backends/cuda/triton_compiler.cpp in an empty working
# folder, in a child process held to a deadline, a memory limit, no network and no write access
# outside that folder. It reads request.json, checks the candidate's syntax tree before any of the
# candidate's code runs, then imports it and compiles each of the task's kernels ahead of time for
# one NVIDIA architecture (no GPU needed), and writes result.json and one .cubin per kernel.
#
# result.json: {"outcome": "ok" | "rejected" | "compile_error" | "environment", "line": N,
#               "message": "...", "triton": "3.6.0", "kernels": [...]}
import ast
import importlib.util
import json
import re
import sys
import traceback

ALLOWED_IMPORTS = {"triton", "triton.language", "math"}
# Names a kernel body may not use: each reaches the interpreter, the file system or other modules.
FORBIDDEN_NAMES = {
    "__import__", "__builtins__", "eval", "exec", "compile", "open", "input", "breakpoint", "getattr", "setattr",
    "delattr", "hasattr", "globals", "locals", "vars", "dir", "type", "object", "super", "memoryview", "classmethod",
    "staticmethod", "property", "exit", "quit", "help", "os", "sys", "subprocess", "importlib",
}
# The attributes of the triton module a candidate may use; everything else (triton.runtime,
# triton.compiler, triton.autotune, ...) reaches the machinery that runs and caches code.
TRITON_ATTRIBUTES = {"jit", "language", "cdiv", "next_power_of_2", "constexpr"}
# The modules a kernel may reach through attributes (`tl.math.exp`, `tl.extra.cuda.libdevice.pow`):
# other modules behind them (triton.language.core has `builtins`, and through it `open`) reach
# what a kernel must not, and Triton's code generator calls whatever Python function it is given.
WALKABLE_MODULES = {
    "triton", "triton.language", "triton.language.math", "triton.language.extra", "triton.language.extra.cuda",
    "triton.language.extra.libdevice", "triton.language.extra.cuda.libdevice", "math",
}
MODULE_LEVEL = ("only imports of triton, triton.language and math, @triton.jit functions and constant "
                "assignments are allowed at module level")


class Refused(Exception):
    def __init__(self, node, message):
        super().__init__(message)
        self.line = getattr(node, "lineno", 0)


def is_constant(node):
    """A literal, a negated literal, or tl.constexpr(<literal>)."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, (int, float, str, bool)) or node.value is None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return is_constant(node.operand)
    if isinstance(node, ast.Call) and not node.keywords and len(node.args) == 1 and is_constexpr_name(node.func):
        return is_constant(node.args[0])
    return False


def dotted(node):
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def is_constexpr_name(node):
    return dotted(node) in {"tl.constexpr", "triton.language.constexpr", "constexpr", "triton.constexpr"}


def check_import(node):
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.name not in ALLOWED_IMPORTS:
                raise Refused(node, f"import {alias.name}: only triton, triton.language and math may be imported")
        return
    if node.module == "triton" and all(a.name in ("language", "jit") for a in node.names):
        return
    if node.module in WALKABLE_MODULES and node.module != "triton" and all(a.name != "*" for a in node.names):
        return  # from triton.language.extra.cuda import libdevice; what each name is, is checked after import
    raise Refused(node, f"from {node.module} import ...: only triton, triton.language (and its math and "
                        f"extra.cuda.libdevice) and math may be imported")


def check_decorator(node):
    target = node.func if isinstance(node, ast.Call) else node
    name = dotted(target)
    if name not in ("triton.jit", "jit"):
        hint = " (kevo tunes the knobs itself: declare them with `# kevo: tune`)" if name and (
            "autotune" in name or "heuristics" in name) else ""
        raise Refused(node, f"decorator @{name or ast.unparse(node)} is not allowed: only @triton.jit{hint}")
    if isinstance(node, ast.Call):
        if node.args:
            raise Refused(node, "@triton.jit takes keyword arguments with literal values only")
        for keyword in node.keywords:
            if not is_constant(keyword.value):
                raise Refused(node, f"@triton.jit({keyword.arg}=...): the value must be a literal")


def check_signature(fn):
    args = fn.args
    if args.vararg or args.kwarg or args.posonlyargs or args.kwonlyargs:
        raise Refused(fn, f"def {fn.name}: only plain positional parameters are allowed")
    for arg in args.args:
        if arg.annotation is not None and not (is_constexpr_name(arg.annotation) or is_constant(arg.annotation)):
            raise Refused(arg, f"parameter {arg.arg}: the annotation must be tl.constexpr or a literal")
    for default in args.defaults:
        if not is_constant(default):
            raise Refused(default, f"def {fn.name}: default values must be literals")
    if fn.returns is not None and not is_constant(fn.returns):
        raise Refused(fn, f"def {fn.name}: the return annotation must be a literal")


def check_body(fn):
    for node in ast.walk(ast.Module(body=fn.body, type_ignores=[])):
        if isinstance(node, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
                             ast.Lambda, ast.Global, ast.Nonlocal, ast.With, ast.AsyncWith, ast.Try, ast.Raise,
                             ast.Await, ast.Yield, ast.YieldFrom, ast.Delete)):
            raise Refused(node, f"{type(node).__name__} is not allowed inside a @triton.jit function")
        if isinstance(node, ast.Name) and node.id in FORBIDDEN_NAMES:
            raise Refused(node, f"'{node.id}' is not allowed in a kernel")
        if isinstance(node, ast.Attribute):
            if node.attr.startswith("_"):
                raise Refused(node, f"attribute '{node.attr}' is not allowed: no underscore attributes")
            if isinstance(node.value, ast.Name) and node.value.id == "triton" and node.attr not in TRITON_ATTRIBUTES:
                raise Refused(node, f"triton.{node.attr} is not allowed in a kernel")


def check_module(tree):
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            check_import(node)
        elif isinstance(node, ast.FunctionDef):
            if len(node.decorator_list) != 1:
                raise Refused(node, f"def {node.name}: a function must have exactly one decorator, @triton.jit "
                                    f"({MODULE_LEVEL})")
            check_decorator(node.decorator_list[0])
            check_signature(node)
            check_body(node)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if not all(isinstance(t, ast.Name) and not t.id.startswith("_") for t in targets):
                raise Refused(node, "an assignment at module level must bind a plain name")
            if node.value is None or not is_constant(node.value):
                raise Refused(node, f"an assignment at module level must be a literal constant ({MODULE_LEVEL})")
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            pass  # a docstring
        else:
            raise Refused(node, f"{type(node).__name__} is not allowed at module level: {MODULE_LEVEL}")


def imported_aliases(tree):
    """The names the module binds to modules: {"tl": "triton.language", "math": "math", ...}."""
    aliases = {}
    for node in tree.body:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    aliases[alias.asname] = alias.name
                else:
                    aliases[alias.name.split(".")[0]] = alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return aliases


def resolve(dotted_name):
    """The object a dotted name of an importable module's attribute names, or None."""
    import importlib

    module, _, attr = dotted_name.rpartition(".")
    try:
        return importlib.import_module(dotted_name)
    except ImportError:
        return getattr(importlib.import_module(module), attr, None) if module else None


def check_module_attributes(tree):
    """Every attribute chain rooted at an imported module stays within WALKABLE_MODULES (run after
    importing Triton, before importing the candidate: it reads Triton's modules, not the file's)."""
    import types

    aliases = imported_aliases(tree)
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                obj = resolve(f"{node.module}.{alias.name}")
                if isinstance(obj, types.ModuleType) and obj.__name__ not in WALKABLE_MODULES:
                    raise Refused(node, f"from {node.module} import {alias.name}: the module {obj.__name__} is not "
                                        f"allowed in a kernel")
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        chain = dotted(node)
        if not chain or chain.split(".")[0] not in aliases:
            continue
        parts = chain.split(".")
        obj = resolve(aliases[parts[0]])
        for depth, attr in enumerate(parts[1:], start=1):
            if not isinstance(obj, types.ModuleType) or obj.__name__ not in WALKABLE_MODULES:
                break
            obj = getattr(obj, attr, None)
            if isinstance(obj, types.ModuleType) and obj.__name__ not in WALKABLE_MODULES:
                raise Refused(node, f"{'.'.join(parts[:depth + 1])} is not allowed in a kernel: it is the module "
                                    f"{obj.__name__}; a kernel may reach only triton.language, its math and "
                                    f"extra.cuda.libdevice, and math")


def knob_value(text):
    for convert in (int, float):
        try:
            return convert(text)
        except ValueError:
            pass
    return {"True": True, "False": False}.get(text, text)


def entry_parameter_count(ptx, name):
    match = re.search(r"\.entry\s+" + re.escape(name) + r"\s*\((.*?)\)", ptx, re.S)
    return len(re.findall(r"\.param\b", match.group(1))) if match else -1


def compile_kernel(module, kernel, knobs, arch, triton):
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    name = kernel["name"]
    fn = getattr(module, name, None)
    if fn is None or type(fn).__name__ != "JITFunction":
        raise Refused(None, f"the file defines no @triton.jit function named {name} (the task's kernel)")
    visible = [p for p in fn.params if not p.is_constexpr]
    declared = kernel["params"]
    if len(visible) != len(declared):
        raise Refused(None, f"{name} takes {len(visible)} non-constexpr parameters "
                            f"({', '.join(p.name for p in visible)}); the task passes {len(declared)} "
                            f"({', '.join(p['name'] for p in declared)})")
    signature, constexprs = {}, {}
    for param in fn.params:
        if param.is_constexpr:
            signature[param.name] = "constexpr"
            if param.name in knobs:
                constexprs[param.name] = knob_value(knobs[param.name])
            elif param.has_default:
                constexprs[param.name] = param.default
            else:
                raise Refused(None, f"{name}: tl.constexpr parameter {param.name} has no value: give it a default "
                                    f"or a `# kevo: tune {param.name} ...` line")
    attrs = {}
    for param, want in zip(visible, declared):
        signature[param.name] = want["type"]  # Triton's own: "*fp32", "u32" (kevo's triton_signature_type)
        # Every buffer kevo passes is a whole device allocation (256-byte aligned): Triton is told
        # what its own launcher tells it of an aligned tensor, so that it may vectorise the loads.
        # Integers are not specialised on their values: one compile serves every size.
        if want["type"].startswith("*"):
            attrs[(fn.arg_names.index(param.name),)] = [["tt.divisibility", 16]]
    options = {"num_warps": int(knobs.get("num_warps", 4)), "num_stages": int(knobs.get("num_stages", 3))}
    compiled = triton.compile(ASTSource(fn, signature=signature, constexprs=constexprs, attrs=attrs),
                              target=GPUTarget("cuda", arch, 32), options=options)
    cubin = f"{name}.cubin"
    with open(cubin, "wb") as out:
        out.write(compiled.asm["cubin"])
    meta = compiled.metadata
    entry_params = entry_parameter_count(compiled.asm["ptx"], meta.name)
    return {
        "name": name, "entry": meta.name, "cubin": cubin, "num_warps": meta.num_warps, "num_stages": meta.num_stages,
        "shared_bytes": meta.shared, "params": [p.name for p in visible],
        "constexprs": constexprs,
        "hidden_params": entry_params - len(visible) if entry_params >= 0 else -1,
        "global_scratch_bytes": meta.global_scratch_size, "profile_scratch_bytes": meta.profile_scratch_size,
    }


def out_of_memory():
    return {"outcome": "compile_error", "line": 0, "message": "the compiler ran out of memory (kevo's limit)"}


def source_line(module, name, error):
    """The file's line of a Triton CompilationError, whose node counts from the function's decorator."""
    node = getattr(error, "node", None)
    start = getattr(getattr(module, name, None), "starting_line_number", None)
    if node is None or start is None or not hasattr(node, "lineno"):
        return 0
    return start + node.lineno


def run(request):
    with open(request["source_file"], encoding="utf-8") as f:
        source = f.read()
    try:
        tree = ast.parse(source, filename=request["source_name"])
    except SyntaxError as e:
        return {"outcome": "compile_error", "line": e.lineno or 0, "message": f"syntax error: {e.msg}"}
    try:
        check_module(tree)
    except Refused as e:
        return {"outcome": "rejected", "line": e.line, "message": str(e)}
    knobs = request["knobs"]
    try:
        import triton
    except ImportError as e:
        return {"outcome": "environment", "message": f"Triton is not installed for {sys.executable}: {e}"}
    if triton.__version__ != request["triton_version"]:
        return {"outcome": "environment", "message": f"Triton {request['triton_version']} is required; "
                                                      f"{sys.executable} has {triton.__version__}"}
    try:
        check_module_attributes(tree)
    except Refused as e:
        return {"outcome": "rejected", "line": e.line, "message": str(e)}
    constexpr_names = set()
    # Checked above: the module binds names to imports, @triton.jit functions and literals only.
    spec = importlib.util.spec_from_file_location("candidate", request["source_file"])
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for kernel in request["kernels"]:
        fn = getattr(module, kernel["name"], None)
        constexpr_names |= {p.name for p in getattr(fn, "params", []) if p.is_constexpr}
    for knob in knobs:
        if knob not in constexpr_names and knob not in ("num_warps", "num_stages"):
            return {"outcome": "rejected", "line": 0, "message": f"tune knob {knob} is not a tl.constexpr parameter of "
                                                                 f"the task's kernels, nor num_warps or num_stages"}
    kernels = []
    for kernel in request["kernels"]:
        try:
            kernels.append(compile_kernel(module, kernel, knobs, request["arch"], triton))
        except Refused as e:
            return {"outcome": "compile_error", "line": e.line, "message": str(e)}
        except MemoryError:
            return out_of_memory()
        except Exception as e:  # a compilation error: the candidate's, with Triton's own message
            if isinstance(e.__cause__, MemoryError) or isinstance(e.__context__, MemoryError):
                return out_of_memory()
            return {"outcome": "compile_error", "line": source_line(module, kernel["name"], e),
                    "message": f"{type(e).__name__}: {str(e).strip()[:4000]}"}
    return {"outcome": "ok", "triton": triton.__version__, "kernels": kernels}


def main():
    with open("request.json", encoding="utf-8") as f:
        request = json.load(f)
    try:
        result = run(request)
    except MemoryError:
        result = out_of_memory()
    except Exception:
        result = {"outcome": "compile_error", "line": 0, "message": traceback.format_exc()[-4000:]}
    with open("result.json", "w", encoding="utf-8") as f:
        json.dump(result, f)


if __name__ == "__main__":
    main()
