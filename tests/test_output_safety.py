"""Untrusted text on the terminal and in reports; wrapping at 80 and 200 columns; ASCII-only terminals."""

from __future__ import annotations

import io
import json
import re

from conftest import run_cli
from gptoss_doctor.output.sink import Output, markdown_text, printable
from hostile import hostile


def test_printable_shows_control_characters_instead_of_sending_them():
    assert printable("a\x1b[2Jb\x1b]0;t\x07\r\x1b[Kc\u202ed") == "a\\x1b[2Jb\\x1b]0;t\\x07\\r\\x1b[Kc\\u202ed"
    assert printable("tab\there") == "tab here"


def test_check_human_output_carries_no_raw_escape_from_the_server():
    with hostile("evil_names") as srv:
        r = run_cli("check", srv.url)
    out = r.stdout + r.stderr
    assert b"\x1b" not in out and b"\x07" not in out and b"\r" not in out
    assert b"\\x1b[2J" in r.stdout  # shown, visibly
    # the model id cannot start a line of its own: every line is either ours or indented under ours
    assert not any(line.startswith(b"## Injected") or line.startswith(b"\xe2\x9c\x93 all good")
                   for line in r.stdout.splitlines())


def test_check_markdown_escapes_markdown_and_html_from_the_server():
    with hostile("evil_names") as srv:
        md = run_cli("check", "--markdown", srv.url).stdout.decode()
    assert "<img" not in md and "</details><img" not in md and "<script>" not in md
    assert "\n## Injected" not in md and "\x1b" not in md
    assert md.count("<details>") == md.count("</details>")


def test_explain_file_escapes_a_logs_escape_codes(tmp_path):
    log = tmp_path / "vllm.log"
    log.write_bytes(b"ERROR 11-02 [x.py:1] ValueError: boom \x1b[2J\x1b]0;pwned\x07\r\x1b[K\xe2\x9c\x93 fake\n")
    r = run_cli("explain", "--offline", "--file", str(log))
    assert b"\x1b" not in r.stdout and b"\x07" not in r.stdout and b"\r" not in r.stdout
    assert b"\\x1b[2J" in r.stdout


def test_wrapping_at_80_and_200_columns_breaks_at_words_with_a_hanging_indent():
    text = "openai_harmony.HarmonyError: Unexpected token 12606 while expecting start token 200006"
    narrow = run_cli("explain", "--offline", text, env={"COLUMNS": "80"}).stdout.decode()
    wide = run_cli("explain", "--offline", text, env={"COLUMNS": "200"}).stdout.decode()
    assert all(len(line) <= 80 or " " not in line.strip() or re.search(r"https?://\S{60,}", line)
               for line in narrow.splitlines())
    # continuation lines hang under their first line: the "why:" text is indented past "why: "
    why = narrow.index("      why: the text quotes")
    assert narrow[why:].splitlines()[1].startswith(" " * 11)
    assert "start token 200006" in wide.replace("\n", " ")
    assert max(len(line) for line in wide.splitlines()) > 80  # wide terminals are not wrapped at 80
    words = set(re.findall(r"[A-Za-z_]{4,}", wide))
    assert words <= set(re.findall(r"[A-Za-z_]{4,}", narrow)) | {"https", "github"}, words - set(re.findall(r"[A-Za-z_]{4,}", narrow))


def test_ascii_terminal_gets_ascii_typography():
    buf = io.TextIOWrapper(io.BytesIO(), encoding="ascii", errors="strict")
    out = Output(stdout=buf, stderr=io.StringIO())
    out.mark("info", "a · b — c … d")
    out.line("Where it comes from: server — the server")
    buf.flush()
    text = buf.buffer.getvalue().decode("ascii")
    assert "?" not in text and "--" in text and "..." in text and "*" in text


def test_markdown_text_escapes_syntax_and_html():
    t = markdown_text("x\n## H </details><img src=x onerror=alert(1)> | `y`")
    assert "<" not in t and ">" not in t.replace("&gt;", "") and "\n" not in t and "\\|" in t
    assert json.dumps(t)  # one plain string


def test_a_word_wider_than_the_line_is_cut_unless_it_is_a_url_or_a_path():
    import io

    from gptoss_doctor.output.sink import Output

    buf = io.StringIO()
    out = Output(stdout=buf)
    out.width = 40
    blob = '{"id":"248ff675","choices":[{"finish_reason":"stop","index":0}]}'  # a server's JSON, one "word"
    url = "https://github.com/vllm-project/vllm/issues/22519#issuecomment-123456789"
    assert all(len(line) <= 40 for line in out._wrap("evidence: " + blob, 10))
    kept = "".join(line.strip() for line in out._wrap("evidence: " + blob, 10))
    assert kept.replace(" ", "") == "evidence:" + blob  # every character kept, only split
    assert url in out._wrap("see: " + url, 10)[-1]  # kept whole: it stays clickable
    mixed = out._wrap(f"evidence: {blob} see {url}", 10)  # cut JSON and a URL in one line of text
    assert any(line.strip() == url for line in mixed) and all(len(line) <= 40 for line in mixed if url not in line)


def test_progress_updates_on_a_terminal_escape_the_servers_text():
    """Every spinner update (it names the engine version and the model id the server sent) is escaped, not only
    the first description: an ESC[2J or an OSC window title from the server never reaches the terminal."""
    from conftest import run_cli_on_tty

    with hostile("evil_names") as srv:
        code, out, tty = run_cli_on_tty("check", srv.url, tty=("stderr",))
    assert b"\x1b[2J" not in tty and b"\x1b]0;" not in tty and b"\x07" not in tty, tty
    assert b"0.11.0\x1b[31m" not in tty, tty  # the version as the server sent it
    assert b"0.11.0\\x1b[31m" in tty and b"gpt-oss-20b\\x1b[2J" in tty  # the updates were shown, escaped
    assert b"\\x1b[2J" in out and b"\x1b" not in out


def test_json_on_a_terminal_escapes_c1_controls_and_bidi_overrides():
    """--json keeps the server's text lossless but as \\u escapes: U+009B (CSI), U+009D (OSC), U+0085 and U+202E
    never reach a terminal raw, and the document stays valid JSON with the same strings."""
    from conftest import run_cli_on_tty
    from hostile import C1_NAME

    with hostile("c1_names") as srv:
        code, _, tty = run_cli_on_tty("check", "--quick", "--json", srv.url, tty=("stdout", "stderr"))
    shown = tty.decode("utf-8")
    for ch in ("\u009b", "\u009d", "\u0085", "\u202e", "\u2066"):
        assert ch not in shown, repr(ch)
    assert "\\u009b" in shown and "\\u202e" in shown
    body = shown[shown.index("{"):shown.rindex("}") + 1].replace("\r\n", "\n")
    doc = json.loads(body)
    assert any(m["id"] == C1_NAME for m in doc["targets"][0]["models"])  # lossless
    assert doc["targets"][0]["engine"]["version"] == "0.11.0\u009b31m\u202e"
