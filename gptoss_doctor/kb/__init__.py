"""The knowledge base: YAML entries under ``knowledge/``, loaded safely, validated, searched.

Parsed entries are cached as JSON in the user cache (keyed by the files' names,
sizes and mtimes) because PyYAML costs ~25 ms to import and more to parse, and
``explain`` must start fast. The YAML files stay the only source of truth.
"""

from __future__ import annotations

import json
import os
import re
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from gptoss_doctor import rx as _rx
from gptoss_doctor import engines as engine_registry
from gptoss_doctor import settings
from gptoss_doctor.errors import UsageError

ENGINES = (
    *engine_registry.names(), "harmony", "openai-sdk", "client", "any",
    # clients and hosted services that sit in front of an engine
    "openai-agents", "codex", "langchain", "llamaindex", "open-webui", "continue", "cline", "roo-code",
    "anythingllm", "n8n", "aider", "crewai", "pydantic-ai", "vercel-ai", "jan", "hosted",
)
ORIGINS = ("server", "client", "proxy", "model-files", "hardware")
ID_RE = r"^[a-z0-9][a-z0-9.-]*[a-z0-9]$"
URL_RE = r"^https://[^\s]+$"

REQUIRED = ("id", "title", "summary", "engines", "origin", "signatures", "causes", "fixes", "references")
OPTIONAL = ("versions", "related", "variants", "distinguish", "replaces", "classes")
SIGNATURE_KEYS = ("messages", "patterns", "token_ids", "symptoms", "findings", "examples", "routes", "context")
FIX_KEYS = ("step", "commands", "flags", "config", "layer")


@dataclass
class Entry:
    id: str
    title: str
    summary: str
    engines: list[str]
    origin: str
    causes: list[str]
    fixes: list[dict]
    references: list[dict]
    messages: list[str] = field(default_factory=list)
    patterns: list[str] = field(default_factory=list)
    token_ids: list[int] = field(default_factory=list)
    symptoms: list[str] = field(default_factory=list)
    findings: list[str] = field(default_factory=list)
    examples: list[str] = field(default_factory=list)  # realistic texts the tests check this entry matches
    routes: list[str] = field(default_factory=list)  # regexes over a proxy's model route (litellm_params.model)
    # regexes of this issue's own setting (a tool call, a fine-tuned model, ignore_eos): its messages are printed by
    # other causes too, so a quote of them is this issue only when the text shows one of these as well
    context: list[str] = field(default_factory=list)
    versions: dict = field(default_factory=dict)
    variants: list[str] = field(default_factory=list)  # class entries: how to tell the reports apart
    distinguish: list[str] = field(default_factory=list)  # merged entries: how to tell which variant you have
    replaces: list[str] = field(default_factory=list)  # ids of the narrower entries merged into this one
    classes: list[str] = field(default_factory=list)  # the triage classes (knowledge/classes) this issue is a case of
    path: str = ""

    @property
    def urls(self) -> list[str]:
        return [r["url"] for r in self.references]

    def fix_lines(self) -> list[str]:
        """Fixes flattened to printable lines (step, then its commands / flags / config)."""
        return [line for _, line in self.fix_items()]

    def fix_for(self, names: list[str], others: list[str]) -> str:
        """The entry's first fix line, unless it is about another engine (it names one of ``others`` and none of
        ``names``, lower-case names and labels): then the first line that names this one. A merged entry lists a
        fix per engine, and a check of llama.cpp wants llama.cpp's, not the vLLM flags that come first."""
        lines = self.fix_lines()
        if not lines:
            return ""

        def names_any(line: str, words: list[str]) -> bool:
            return any(re.search(rf"(?<![\w.-]){re.escape(w)}(?![\w-])", line.lower()) for w in words if len(w) > 2)

        if names_any(lines[0], others) and not names_any(lines[0], names):
            return next((line for line in lines if names_any(line, names)), lines[0])
        return lines[0]

    def fix_items(self) -> list[tuple[str | None, str]]:
        """(layer or None, printable line) per fix: the layer says who applies it (server, proxy, client …)."""
        lines = []
        for fx in self.fixes:
            line = fx["step"]
            extras = [*fx.get("commands", []), *fx.get("flags", [])]
            if fx.get("config"):
                extras.append(fx["config"])
            if extras:
                line += " — " + "; ".join(extras)
            lines.append((fx.get("layer"), line))
        return lines

    def to_json(self) -> dict:
        return {
            "id": self.id, "title": self.title, "summary": self.summary, "engines": self.engines,
            "origin": self.origin, "versions": self.versions,
            "signatures": {"messages": self.messages, "patterns": self.patterns, "token_ids": self.token_ids,
                           "symptoms": self.symptoms, "findings": self.findings, "examples": self.examples,
                           "routes": self.routes, "context": self.context},
            "causes": self.causes, "fixes": self.fixes, "references": self.references, "variants": self.variants,
            "distinguish": self.distinguish, "replaces": self.replaces, "classes": self.classes,
        }


_KNOWLEDGE_DIR: list[Path] = []


def knowledge_dir() -> Path:
    """Where the entries live: $GPTOSS_DOCTOR_KNOWLEDGE, the installed copy, or the source tree."""
    env = os.environ.get("GPTOSS_DOCTOR_KNOWLEDGE")
    if env:
        return Path(env)
    if _KNOWLEDGE_DIR:  # found once per process: every explain step asks (resolving the path costs syscalls)
        return _KNOWLEDGE_DIR[0]
    here = Path(__file__).resolve().parent
    for cand in (here.parent / "knowledge", here.parent.parent / "knowledge"):
        if cand.is_dir():
            _KNOWLEDGE_DIR.append(cand)
            return cand
    raise UsageError("knowledge base not found (set GPTOSS_DOCTOR_KNOWLEDGE to the knowledge/ folder)")


def _files(directory: Path) -> list[Path]:
    """The folder's ``*.yaml`` files (not hidden ones), sorted: one scandir, since every run asks (a glob and its
    Path objects cost a few ms of start-up)."""
    try:
        with os.scandir(directory) as it:
            names = sorted(d.name for d in it if d.name.endswith(".yaml") and not d.name.startswith(".")
                           and d.is_file())
    except OSError:
        return []
    return [directory / name for name in names]


def _cache_path(files: list[Path]) -> Path | None:
    # crc32 rather than hashlib: loading OpenSSL costs ~3 ms of start-up, and this is only a cache key
    stats = [(p, os.stat(p)) for p in files]
    key = "kb-v5\n" + "".join(f"{p}\0{st.st_size}\0{st.st_mtime_ns}\n" for p, st in stats)
    raw = key.encode()
    digest = f"{zlib.crc32(raw):08x}{zlib.crc32(raw[::-1]):08x}{len(files):04x}"
    return settings.user_cache_dir() / f"kb-{digest}.json"


def _read_yaml(path: Path) -> Any:
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        with open(path, encoding="utf-8") as fh:
            return yaml.load(fh, Loader=loader)  # noqa: S506 - a SafeLoader
    except yaml.YAMLError as exc:
        raise UsageError(f"{path.name}: invalid YAML: {str(exc).splitlines()[0]}") from exc


def validate_raw(raw: Any, path: str = "?") -> list[str]:
    """Schema problems of one parsed YAML document (empty when valid)."""
    errs: list[str] = []
    where = Path(path).name
    if not isinstance(raw, dict):
        return [f"{where}: top level must be a mapping"]
    for key in REQUIRED:
        if key not in raw:
            errs.append(f"{where}: missing '{key}'")
    for key in raw:
        if key not in REQUIRED + OPTIONAL:
            errs.append(f"{where}: unknown key '{key}'")
    if errs:
        return errs
    eid = raw["id"]
    if not isinstance(eid, str) or not re.match(ID_RE, eid):
        errs.append(f"{where}: id must be lower-case kebab-case")
    elif path != "?" and Path(path).stem != eid:
        errs.append(f"{where}: file name must be '{eid}.yaml'")
    for key in ("title", "summary"):
        if not isinstance(raw[key], str) or not raw[key].strip():
            errs.append(f"{where}: '{key}' must be non-empty text")
    if raw["origin"] not in ORIGINS:
        errs.append(f"{where}: origin must be one of {', '.join(ORIGINS)}")
    versions = raw.get("versions", {})
    if not isinstance(versions, dict) or set(versions) - {"affected", "fixed"}:
        errs.append(f"{where}: 'versions' takes only 'affected' and 'fixed'")
    sig = raw["signatures"]
    if not isinstance(sig, dict) or not sig:
        errs.append(f"{where}: 'signatures' must be a non-empty mapping")
    else:
        for key in sig:
            if key not in SIGNATURE_KEYS:
                errs.append(f"{where}: unknown signature key '{key}'")
        for key in ("messages", "patterns", "symptoms", "findings", "examples", "routes", "context"):
            if not _is_texts(sig.get(key, [])):
                errs.append(f"{where}: signatures.{key} must be a list of non-empty strings")
        for msg in sig.get("messages", []) or []:
            if isinstance(msg, str) and _markup_only(msg):
                errs.append(f"{where}: message {msg!r} is only Harmony markup, which every leak shows: quote an "
                            "error text, or name the artifact under findings")
        errs += _pattern_problems(where, sig.get("patterns"))
        errs += _pattern_problems(where, sig.get("routes"))
        errs += _pattern_problems(where, sig.get("context"))
        if sig.get("context") and not (sig.get("messages") or sig.get("patterns")):
            errs.append(f"{where}: signatures.context qualifies messages or patterns: give those too")
        toks = sig.get("token_ids", [])
        if not isinstance(toks, list) or not all(isinstance(t, int) and 0 <= t < 201088 for t in toks):
            errs.append(f"{where}: signatures.token_ids must be a list of token IDs below 201088")
        from gptoss_doctor.check.finding_ids import FINDING_IDS

        for fid in sig.get("findings", []) or []:
            if isinstance(fid, str) and fid not in FINDING_IDS:
                errs.append(f"{where}: unknown finding id '{fid}'")
        if not any(sig.get(k) for k in ("messages", "patterns", "symptoms", "findings")):
            errs.append(f"{where}: signatures need at least one message, pattern, symptom or finding")
    if not _is_texts(raw["causes"], nonempty=True):
        errs.append(f"{where}: 'causes' must be a non-empty list of text")
    for key in ("variants", "distinguish"):
        if not _is_texts(raw.get(key, [])):
            errs.append(f"{where}: '{key}' must be a list of text")
    replaces = raw.get("replaces", [])
    if not isinstance(replaces, list) or not all(isinstance(r, str) and re.match(ID_RE, r) for r in replaces):
        errs.append(f"{where}: 'replaces' must be a list of entry ids (lower-case kebab-case)")
    elif raw["id"] in replaces or len(set(replaces)) != len(replaces):
        errs.append(f"{where}: 'replaces' must not name the entry itself or an id twice")
    classes = raw.get("classes", [])
    if not isinstance(classes, list) or not all(c in CLASS_IDS for c in classes) or len(set(classes)) != len(classes):
        errs.append(f"{where}: 'classes' must list triage class ids (some of {', '.join(CLASS_IDS)}), each once")
    for key, problems in (("engines", _engine_problems), ("fixes", _fix_problems), ("references", _ref_problems)):
        items = raw[key]
        if not isinstance(items, list) or not items:
            errs.append(f"{where}: '{key}' must be a non-empty list")
        else:
            errs += [f"{where}: {p}" for item in items for p in problems(item)]
    return errs


_HARMONY_WORDS = _rx.compile(r"<\|[a-z]+\|>|\b(?:analysis|commentary|final|assistant|system|user|developer|"
                            r"to|json|functions)\b|[^a-z]+", re.I)


def _markup_only(msg: str) -> bool:
    """A "message" that is Harmony special tokens, roles and channel names only (``<|channel|>analysis``):
    it would quote-match every leaked reply, whatever its cause."""
    return "<|" in msg and not _HARMONY_WORDS.sub("", msg)


def _pattern_problems(where: str, patterns: Any) -> list[str]:
    out = []
    for pat in patterns or []:
        try:
            _rx.compile(pat)
        except (re.error, TypeError) as exc:
            out.append(f"{where}: bad pattern {pat!r}: {exc}")
    return out


def _is_texts(val: Any, nonempty: bool = False) -> bool:
    """A list of non-empty strings (and not empty, when ``nonempty``)."""
    return isinstance(val, list) and (bool(val) or not nonempty) and all(isinstance(v, str) and v.strip() for v in val)


def _engine_problems(e: Any) -> list[str]:
    return [] if e in ENGINES else [f"unknown engine '{e}' (one of {', '.join(ENGINES)})"]


def _fix_problems(fx: Any) -> list[str]:
    if not isinstance(fx, dict) or not isinstance(fx.get("step"), str) or set(fx) - set(FIX_KEYS):
        return [f"each fix needs 'step' text and only {', '.join(FIX_KEYS)}"]
    out = [f"fix.{key} must be a list of strings" for key in ("commands", "flags")
           if key in fx and not (isinstance(fx[key], list) and all(isinstance(v, str) for v in fx[key]))]
    if "config" in fx and not isinstance(fx["config"], str):
        out.append("fix.config must be text")
    if "layer" in fx and fx["layer"] not in ORIGINS:
        out.append(f"fix.layer must be one of {', '.join(ORIGINS)}")
    return out


def _ref_problems(ref: Any) -> list[str]:
    if not isinstance(ref, dict) or not isinstance(ref.get("url"), str) or not re.match(URL_RE, ref["url"]):
        return ["each reference needs an https 'url'"]
    return ["a reference takes only 'url' and 'title'"] if set(ref) - {"url", "title"} else []


def _entry(raw: dict, path: str) -> Entry:
    sig = raw["signatures"]
    return Entry(
        id=raw["id"], title=raw["title"].strip(), summary=" ".join(raw["summary"].split()),
        engines=list(raw["engines"]), origin=raw["origin"],
        causes=[" ".join(c.split()) for c in raw["causes"]], fixes=list(raw["fixes"]),
        references=list(raw["references"]),
        messages=list(sig.get("messages") or []), patterns=list(sig.get("patterns") or []),
        token_ids=list(sig.get("token_ids") or []), symptoms=list(sig.get("symptoms") or []),
        findings=list(sig.get("findings") or []), examples=list(sig.get("examples") or []),
        routes=list(sig.get("routes") or []), context=list(sig.get("context") or []),
        versions=dict(raw.get("versions") or {}),
        variants=[" ".join(v.split()) for v in raw.get("variants") or []],
        distinguish=[" ".join(d.split()) for d in raw.get("distinguish") or []],
        replaces=list(raw.get("replaces") or []), classes=list(raw.get("classes") or []), path=path,
    )


def validate_dir(directory: Path | None = None) -> tuple[list[Entry], list[str]]:
    """Parse and check every entry; return the valid entries and all problems."""
    directory = directory or knowledge_dir()
    if not directory.is_dir():
        raise UsageError(f"not a folder: {directory}")
    entries, errs, seen = [], [], {}
    for path in _files(directory):
        raw = _read_yaml(path)
        problems = validate_raw(raw, str(path))
        if problems:
            errs.extend(problems)
            continue
        if raw["id"] in seen:
            errs.append(f"{path.name}: duplicate id '{raw['id']}' (also in {seen[raw['id']]})")
            continue
        seen[raw["id"]] = path.name
        entries.append(_entry(raw, str(path)))
    errs += _alias_problems(entries)
    if not entries and not errs:
        errs.append(f"{directory}: no *.yaml entries")
    errs += validate_classes(directory)[1]
    return entries, errs


def _alias_problems(entries: list[Entry]) -> list[str]:
    """An id named in 'replaces' must be gone (no entry, no file of its own) and replaced by one entry only."""
    ids = {e.id: Path(e.path).name for e in entries}
    owner: dict[str, str] = {}
    errs = []
    for e in entries:
        where = Path(e.path).name
        for old in e.replaces:
            if old in ids:
                errs.append(f"{where}: replaces '{old}', which is still an entry ({ids[old]}): delete that file")
            if old in owner:
                errs.append(f"{where}: '{old}' is already replaced by {owner[old]}")
            else:
                owner[old] = e.id
    return errs


def aliases(entries: Iterable[Entry] | None = None) -> dict[str, str]:
    """Old id -> the id of the entry it was merged into (from the entries' 'replaces' lists)."""
    entries = entries if entries is not None else load()
    return {old: e.id for e in entries for old in e.replaces}


def resolve(entry_id: str, entries: Iterable[Entry] | None = None) -> Entry | None:
    """The entry with this id, or the one it was merged into; None when neither exists."""
    entries = list(entries) if entries is not None else load()
    by_id = {e.id: e for e in entries}
    return by_id.get(entry_id) or by_id.get(aliases(entries).get(entry_id, ""))


CACHE_CAP = 256 << 20  # a compiled cache file larger than this is not read (the entries' JSON is about 1 MiB)
_LOADED: dict[str, list[Entry]] = {}
_CACHE_OF: dict[int, Path] = {}  # id(entries) -> its JSON cache file, where the compiled ranking index sits too


def _cached(cache: Path | None, make):
    """The objects ``make`` builds from the cached JSON rows in ``cache`` (None when absent or unreadable)."""
    if cache is None:
        return None
    from gptoss_doctor.fsread import Unreadable, read_capped

    try:  # a regular file under the cap: a FIFO or device in its place never blocks the run
        return [make(**d) for d in json.loads(read_capped(cache, CACHE_CAP).decode("utf-8"))]
    except (Unreadable, ValueError, TypeError):
        return None


def _store(cache: Path | None, rows: list[dict]) -> None:
    if cache is None:
        return
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        tmp = cache.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(rows), encoding="utf-8")
        os.replace(tmp, cache)
        _prune(cache)
    except OSError:
        pass  # a read-only home is fine: we just parse the YAML each time


def _invalid(errs: list[str]) -> UsageError:
    return UsageError(f"invalid knowledge base: {errs[0]}" + (f" (+{len(errs) - 1} more)" if len(errs) > 1 else ""),
                      hint="run 'gptoss-doctor kb validate' for the full list")


def _load_cached(directory: Path, memo: dict, files: list[Path], make, validate) -> tuple[list, Path | None]:
    """Items of a knowledge folder (entries or classes): memoised, from the JSON cache when the YAML has not
    changed, else validated and cached. Invalid -> UsageError."""
    cache = _cache_path(files) if files else None
    items = _cached(cache, make)
    if items is None:
        items, errs = validate(directory)
        if errs:
            raise _invalid(errs)
        _store(cache, [x.__dict__ for x in items])
    memo[str(directory)] = items
    return items, cache


def load(directory: Path | None = None) -> list[Entry]:
    """Valid entries, from the JSON cache when the YAML has not changed. Invalid KB -> UsageError."""
    directory = directory or knowledge_dir()
    if str(directory) in _LOADED:
        return _LOADED[str(directory)]
    entries, cache = _load_cached(directory, _LOADED, _files(directory), Entry, validate_dir)
    if cache is not None:
        _CACHE_OF[id(entries)] = cache
    return entries


# --- triage classes: knowledge/classes/<id>.yaml ------------------------------------------------------------------
# the agreed class ids (issue 17): every engineer's labels and tests use them, so the set is fixed here
CLASS_IDS = ("auth", "unreachable", "engine-not-ready", "route-missing", "proxy-wrapped", "request-rejected",
             "harmony-parse", "harmony-leak", "empty-or-reasoning-only", "tool-calls", "structured-output",
             "garbage-output", "looping-slow", "load-failure", "oom", "kernel-hardware", "install-build",
             "context-length", "responses-api")
CLASS_KEYS = ("id", "title", "summary", "layers", "select", "checks", "fixes", "trackers", "query")
CLASS_OPTIONAL = ("ask",)
CLASS_LAYERS = (*ORIGINS, "provider")
SELECT_KEYS = ("http_status", "patterns", "setup", "unless", "failure", "features", "phase", "facets", "facets_api",
               "kinds", "artifacts")
PATTERN_KEYS = ("patterns", "setup", "unless")  # select keys that hold regular expressions
TRACKER_SLOTS = ("engine", "proxy", "client", "provider")


@dataclass
class TriageClass:
    id: str
    title: str
    summary: str
    layers: list[str]
    select: dict
    checks: list[str]
    fixes: list[dict]  # {step, layer, references: [url]}
    trackers: list[str]  # facet slots (engine, proxy, client, provider) or owner/repo
    query: str
    ask: list[str] = field(default_factory=list)  # what a text of this class should also say, to tell its causes apart
    path: str = ""


def validate_class(raw: Any, path: str = "?") -> list[str]:
    """Schema problems of one triage class (empty when valid)."""
    where = Path(path).name
    if not isinstance(raw, dict):
        return [f"{where}: top level must be a mapping"]
    errs = [f"{where}: missing '{k}'" for k in CLASS_KEYS if k not in raw]
    errs += [f"{where}: unknown key '{k}'" for k in raw if k not in (*CLASS_KEYS, *CLASS_OPTIONAL)]
    if errs:
        return errs
    if raw["id"] not in CLASS_IDS:
        errs.append(f"{where}: class id must be one of the agreed ids ({', '.join(CLASS_IDS)})")
    elif path != "?" and Path(path).stem != raw["id"]:
        errs.append(f"{where}: file name must be '{raw['id']}.yaml'")
    for key in ("title", "summary", "query"):
        if not isinstance(raw[key], str) or not raw[key].strip():
            errs.append(f"{where}: '{key}' must be non-empty text")
    if not _is_texts(raw["layers"], nonempty=True) or set(raw["layers"]) - set(CLASS_LAYERS):
        errs.append(f"{where}: 'layers' must list some of {', '.join(CLASS_LAYERS)}")
    if not _is_texts(raw["checks"], nonempty=True):
        errs.append(f"{where}: 'checks' must be a non-empty list of text")
    if not _is_texts(raw.get("ask", [])):
        errs.append(f"{where}: 'ask' must be a list of text")
    sel = raw["select"]
    if not isinstance(sel, dict) or not sel or set(sel) - set(SELECT_KEYS):
        errs.append(f"{where}: 'select' must be a mapping of {', '.join(SELECT_KEYS)}")
    else:
        if not all(isinstance(s, int) and 100 <= s < 600 for s in sel.get("http_status", [])):
            errs.append(f"{where}: select.http_status must list HTTP status codes")
        for key in (k for k in SELECT_KEYS if k != "http_status"):
            if not _is_texts(sel.get(key, [])):
                errs.append(f"{where}: select.{key} must be a list of non-empty strings")
        for key in PATTERN_KEYS:
            errs += _pattern_problems(where, sel.get(key))
    fixes = raw["fixes"]
    if not isinstance(fixes, list) or not fixes:
        errs.append(f"{where}: 'fixes' must be a non-empty list")
    else:
        for fx in fixes:
            refs = fx.get("references") if isinstance(fx, dict) else None
            if not isinstance(fx, dict) or set(fx) != {"step", "layer", "references"} or \
                    not isinstance(fx["step"], str) or fx["layer"] not in CLASS_LAYERS:
                errs.append(f"{where}: each fix needs exactly 'step', 'layer' (one of {', '.join(CLASS_LAYERS)}) "
                            "and 'references'")
            elif not _is_texts(refs, nonempty=True) or not all(re.match(URL_RE, u) for u in refs):
                errs.append(f"{where}: each fix needs https references (a public issue or pull request)")
    if not _is_texts(raw["trackers"], nonempty=True) or not all(
            t in TRACKER_SLOTS or re.match(r"^[\w.-]+/[\w.-]+$", t) for t in raw["trackers"]):
        errs.append(f"{where}: 'trackers' lists facet slots ({', '.join(TRACKER_SLOTS)}) or owner/repo names")
    return errs


def _class_files(directory: Path) -> list[Path]:
    return _files(directory / "classes") if (directory / "classes").is_dir() else []


def validate_classes(directory: Path | None = None) -> tuple[list[TriageClass], list[str]]:
    directory = directory or knowledge_dir()
    classes, errs = [], []
    for path in _class_files(directory):
        raw = _read_yaml(path)
        problems = validate_class(raw, str(path))
        if problems:
            errs.extend(problems)
            continue
        classes.append(TriageClass(**raw, path=str(path)))
    return classes, errs


_CLASSES: dict[str, list[TriageClass]] = {}


def load_classes(directory: Path | None = None) -> list[TriageClass]:
    """The triage classes, from their JSON cache when the YAML has not changed. Invalid -> UsageError."""
    directory = directory or knowledge_dir()
    if str(directory) in _CLASSES:
        return _CLASSES[str(directory)]
    classes, cache = _load_cached(directory, _CLASSES, _class_files(directory), TriageClass, validate_classes)
    if cache is not None:
        _CACHE_OF[id(classes)] = cache
    return classes


def _prune(keep: Path, max_age: float = 7 * 86400) -> None:
    """Drop compiled caches of older knowledge-base versions (a week unused), so edits do not pile files up."""
    import time

    now = time.time()
    stem = keep.name.split(".", 1)[0]
    for p in keep.parent.glob("kb-*"):
        try:
            if not p.name.startswith(stem) and now - p.stat().st_mtime > max_age:
                p.unlink()
        except OSError:
            pass


def ranker(entries: list[Entry]):
    """The BM25 ranker of ``entries``, compiled once per knowledge-base version and cached beside the entries.

    marshal, not JSON: it loads the ~40k-term index several times faster and can hold nothing but plain data
    (the file name carries the Python version, since marshal's format may change between versions)."""
    from gptoss_doctor.explain import rank

    return rank.Ranker(_compiled(entries, f"bm25-v{rank.VERSION}", lambda: rank.build(entries)))


def literals(items: list, patterns: list[str]) -> dict[str, list[str] | None]:
    """The literal pre-test of each of ``patterns`` (``explain.literals``), for the loaded ``items`` (entries or
    triage classes) whose patterns they are: computed once per knowledge-base version and cached beside them."""
    from gptoss_doctor.explain import literals as lit

    return _compiled(items, f"literals-v{lit.VERSION}", lambda: lit.table(patterns))


def _compiled(items: list, kind: str, build):
    """Plain data ``build`` makes from loaded ``items``, kept in a marshal file beside their JSON cache."""
    import marshal
    import sys

    from gptoss_doctor.fsread import Unreadable, read_capped

    cache = _CACHE_OF.get(id(items))
    path = cache.with_suffix(f".{kind}-py{sys.version_info[0]}{sys.version_info[1]}.bin") if cache else None
    if path is not None:
        try:
            return marshal.loads(read_capped(path, CACHE_CAP))
        except (Unreadable, ValueError, EOFError, TypeError, KeyError):
            pass
    data = build()
    if path is not None:
        try:
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_bytes(marshal.dumps(data))
            os.replace(tmp, path)
        except OSError:
            pass
    return data


def get(entry_id: str, entries: Iterable[Entry] | None = None) -> Entry:
    """The entry with this id; an id that was merged into a wider entry gives that entry (see ``replaces``)."""
    entries = list(entries) if entries is not None else load()
    found = resolve(entry_id, entries)
    if found is not None:
        return found
    close = [e.id for e in entries if entry_id.lower() in e.id]
    raise UsageError(f"no knowledge-base entry '{entry_id}'", hint=("did you mean: " + ", ".join(close[:5])) if close else "see 'gptoss-doctor kb list'")


def by_finding(finding_id: str, entries: Iterable[Entry] | None = None) -> list[Entry]:
    """Entries that name ``finding_id`` in their signatures (used by ``check``)."""
    entries = entries if entries is not None else load()
    return [e for e in entries if finding_id in e.findings]
