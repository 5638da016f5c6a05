"""`rulesmith lsp` driven by a real LSP client (pygls's): a copy of Sirius
(basic, and lifeboats which extends it) is opened, broken and fixed, and
the diagnostics, hovers, completions, definitions, references and renames
that come back are checked."""

import asyncio
import os
import shutil
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.lsp.client import LanguageClient

ROOT = Path(__file__).resolve().parents[2]
BIN = os.environ.get("RULESMITH_BIN", str(ROOT / "target" / "debug" / "rulesmith"))
# How long a test waits for the diagnostics it expects.
WAIT = 30.0


@pytest.fixture
def folder(tmp_path):
    """variants/sirius-basic, variants/sirius-lifeboats and scripts/sirius,
    copied with the same layout (the variants name their scripts by
    relative path)."""
    for part in ["variants/sirius-basic", "variants/sirius-lifeboats", "scripts/sirius"]:
        shutil.copytree(ROOT / part, tmp_path / part)
    return tmp_path


def uri(path):
    return Path(path).resolve().as_uri()


class Session:
    """One server: the client, the diagnostics published per file, and the
    open documents' texts and versions."""

    def __init__(self, folder):
        self.folder = folder
        self.client = LanguageClient("rulesmith-test", "1")
        self.diagnostics = {}
        self.changed = asyncio.Event()
        self.texts = {}
        self.versions = {}

        @self.client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def published(params):
            self.diagnostics[params.uri] = params.diagnostics
            self.changed.set()

    async def __aenter__(self):
        await self.client.start_io(BIN, "lsp")
        await self.client.initialize_async(
            types.InitializeParams(
                capabilities=types.ClientCapabilities(),
                root_uri=uri(self.folder),
                workspace_folders=[types.WorkspaceFolder(uri=uri(self.folder), name="test")],
            )
        )
        self.client.initialized(types.InitializedParams())
        return self

    async def __aexit__(self, *exc):
        await self.client.shutdown_async(None)
        self.client.exit(None)
        await self.client.stop()

    def path(self, relative):
        return self.folder / relative

    def open(self, relative):
        p = self.path(relative)
        text = p.read_text()
        self.texts[relative] = text
        self.versions[relative] = 1
        language = "rhai" if p.suffix == ".rhai" else "toml"
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(uri=uri(p), language_id=language, version=1, text=text)
            )
        )
        return text

    def edit(self, relative, old, new):
        """Replaces the first `old` in an open document (unsaved)."""
        text = self.texts[relative]
        assert old in text, old
        text = text.replace(old, new, 1)
        self.texts[relative] = text
        self.versions[relative] += 1
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(
                    uri=uri(self.path(relative)), version=self.versions[relative]
                ),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )

    def save(self, relative):
        self.path(relative).write_text(self.texts[relative])
        self.client.text_document_did_save(
            types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri(self.path(relative))))
        )

    def diags(self, relative):
        return list(self.diagnostics.get(uri(self.path(relative)), []))

    async def until(self, relative, holds):
        """Waits until the file's diagnostics satisfy `holds`; returns them."""
        deadline = asyncio.get_running_loop().time() + WAIT
        while not holds(self.diags(relative)):
            self.changed.clear()
            left = deadline - asyncio.get_running_loop().time()
            assert left > 0, f"{relative}: still {[(d.range, d.message) for d in self.diags(relative)]}"
            try:
                await asyncio.wait_for(self.changed.wait(), left)
            except asyncio.TimeoutError:
                pass
        return self.diags(relative)

    def position(self, relative, needle, offset=0):
        """The position of the first `needle` in a document, plus
        `offset` characters."""
        text = self.texts.get(relative) or self.path(relative).read_text()
        i = text.index(needle) + offset
        line = text.count("\n", 0, i)
        return types.Position(line=line, character=i - (text.rfind("\n", 0, i) + 1))

    def at(self, relative, needle, offset=0):
        return types.TextDocumentIdentifier(uri=uri(self.path(relative))), self.position(relative, needle, offset)

    async def hover(self, relative, needle, offset=0):
        doc, pos = self.at(relative, needle, offset)
        h = await self.client.text_document_hover_async(types.HoverParams(text_document=doc, position=pos))
        return h.contents.value if h else None

    async def complete(self, relative, needle, offset=0):
        doc, pos = self.at(relative, needle, offset)
        r = await self.client.text_document_completion_async(types.CompletionParams(text_document=doc, position=pos))
        items = r.items if hasattr(r, "items") else (r or [])
        return [i.label for i in items]

    async def definition(self, relative, needle, offset=0):
        doc, pos = self.at(relative, needle, offset)
        r = await self.client.text_document_definition_async(types.DefinitionParams(text_document=doc, position=pos))
        return [(Path(types_path(l.uri)).relative_to(self.folder).as_posix(), l.range.start.line) for l in r or []]

    async def references(self, relative, needle, offset=0):
        doc, pos = self.at(relative, needle, offset)
        r = await self.client.text_document_references_async(
            types.ReferenceParams(
                text_document=doc, position=pos, context=types.ReferenceContext(include_declaration=True)
            )
        )
        return sorted((Path(types_path(l.uri)).relative_to(self.folder).as_posix(), l.range.start.line) for l in r)

    def line_of(self, relative, needle):
        text = self.texts.get(relative) or self.path(relative).read_text()
        return text[: text.index(needle)].count("\n")


def types_path(u):
    from urllib.parse import unquote, urlparse

    return unquote(urlparse(u).path)


def run(coroutine):
    asyncio.run(asyncio.wait_for(coroutine, 120))


BASIC = "variants/sirius-basic/variant.toml"
LIFEBOATS = "variants/sirius-lifeboats/variant.toml"
MANEUVER = "scripts/sirius/maneuver.rhai"
EVALUATE = "scripts/sirius/evaluate.rhai"
GEOMETRY = "scripts/sirius/geometry.rhai"


def test_errors_show_as_they_are_typed_and_go_when_fixed(folder):
    async def body():
        async with Session(folder) as s:
            s.open(BASIC)
            s.open(MANEUVER)
            # A clean variant: nothing published but empty lists.
            await asyncio.sleep(0.2)
            assert not [d for d in s.diags(MANEUVER) if d.severity == types.DiagnosticSeverity.Error]

            # An unknown name in a string the loader's lint checks.
            s.edit(MANEUVER, 'enter_step("lock");', 'enter_step("lok");')
            [d] = await s.until(MANEUVER, lambda ds: len(ds) == 1)
            assert "no step 'lok'" in d.message
            line = s.line_of(MANEUVER, 'enter_step("lok")')
            start = s.position(MANEUVER, '"lok"').character
            assert (d.range.start.line, d.range.start.character, d.range.end.character) == (line, start, start + 5)
            s.edit(MANEUVER, 'enter_step("lok");', 'enter_step("lock");')
            await s.until(MANEUVER, lambda ds: ds == [])

            # A Rhai syntax error.
            s.edit(MANEUVER, "fn do_stay() {", "fn do_stay( {")
            [d] = await s.until(MANEUVER, lambda ds: len(ds) == 1)
            assert "syntax error" in d.message
            assert d.range.start.line == s.line_of(MANEUVER, "fn do_stay( {")
            s.edit(MANEUVER, "fn do_stay( {", "fn do_stay() {")
            await s.until(MANEUVER, lambda ds: ds == [])

            # Arity: the TOML's function takes no argument, the script's one.
            s.edit(MANEUVER, "fn do_stay() {", "fn do_stay(x) {")
            ds = await s.until(BASIC, lambda ds: any("do_stay" in d.message for d in ds))
            [d] = [d for d in ds if "do_stay" in d.message]
            assert d.range.start.line == s.line_of(BASIC, 'apply = "do_stay"')
            s.edit(MANEUVER, "fn do_stay(x) {", "fn do_stay() {")
            await s.until(BASIC, lambda ds: ds == [])

            # What the compiler refuses (a float), at its line.
            s.edit(MANEUVER, 'enter_step("lock");', 'let f = 1.5;\n    enter_step("lock");')
            [d] = await s.until(MANEUVER, lambda ds: len(ds) == 1)
            assert "compiler would refuse" in d.message
            assert d.range.start.line == s.line_of(MANEUVER, "let f = 1.5;")
            s.edit(MANEUVER, 'let f = 1.5;\n    enter_step("lock");', 'enter_step("lock");')
            await s.until(MANEUVER, lambda ds: ds == [])

            # TOML syntax, then an unknown key, in the variant file.
            s.edit(BASIC, 'text = "stay"', 'text = "stay')
            [d] = await s.until(BASIC, lambda ds: len(ds) == 1)
            assert d.range.start.line == s.line_of(BASIC, 'text = "stay')
            s.edit(BASIC, 'text = "stay', 'text = "stay"\napplly = "x"')
            [d] = await s.until(BASIC, lambda ds: len(ds) == 1 and "applly" in ds[0].message)
            assert d.range.start.line == s.line_of(BASIC, 'applly = "x"')
            s.edit(BASIC, '\napplly = "x"', "")
            await s.until(BASIC, lambda ds: ds == [])

    run(body())


def test_an_error_in_a_shared_script_shows_through_the_extending_variant(folder):
    async def body():
        async with Session(folder) as s:
            s.open(LIFEBOATS)
            s.open(MANEUVER)
            # A deck field misspelt in the extending variant: its own file.
            s.edit(LIFEBOATS, "hull = { type = \"int\", min = 1, max = 7", "hull = { type = \"itn\", min = 1, max = 7")
            [d] = await s.until(LIFEBOATS, lambda ds: len(ds) >= 1)
            assert "itn" in d.message
            assert d.range.start.line == s.line_of(LIFEBOATS, '"itn"')
            s.edit(LIFEBOATS, '"itn"', '"int"')
            await s.until(LIFEBOATS, lambda ds: ds == [])

    run(body())


def test_a_save_plays_the_smoke_games_and_a_newer_edit_cancels_them(folder):
    async def body():
        async with Session(folder) as s:
            s.open(BASIC)
            s.open(MANEUVER)
            # A script that fails when the game runs (not at load): a game
            # played on save finds it, at its line.
            s.edit(MANEUVER, "fn maneuver_legal() {\n", "fn maneuver_legal() {\n    if turn() > 2 { let x = [1][5]; }\n")
            s.save(MANEUVER)
            ds = await s.until(MANEUVER, lambda ds: any("random" in d.message for d in ds))
            [d] = [d for d in ds if "random" in d.message]
            assert d.range.start.line == s.line_of(MANEUVER, "let x = [1][5]")
            # An edit clears it (it no longer holds) until the next save.
            s.edit(MANEUVER, "    if turn() > 2 { let x = [1][5]; }\n", "")
            await s.until(MANEUVER, lambda ds: ds == [])
            s.save(MANEUVER)
            await asyncio.sleep(1.0)
            assert s.diags(MANEUVER) == []

    run(body())


def test_hovers(folder):
    async def body():
        async with Session(folder) as s:
            s.open(BASIC)
            s.open(MANEUVER)
            native = await s.hover(MANEUVER, "enter_step(", 2)
            assert "enter_step(name)" in native and "queued" in native
            param = await s.hover(MANEUVER, 'param("quiet_rounds_to_draw")', 8)
            assert "quiet_rounds_to_draw" in param and "1..=100" in param and "quiet turns" in param
            action = await s.hover(MANEUVER, 'add("stay")', 6)
            assert "stay" in action and "do_stay" in action
            function = await s.hover(BASIC, 'apply = "do_stay"', 10)
            assert "fn do_stay()" in function and "maneuver.rhai" in function
            s.open(LIFEBOATS)
            deck = await s.hover(LIFEBOATS, "[decks.lifeboats]", 8)
            assert "hull" in deck and "int 1..7" in deck

    run(body())


def test_completions(folder):
    async def body():
        async with Session(folder) as s:
            s.open(BASIC)
            s.open(MANEUVER)
            # Inside enter_step("..."): the steps.
            steps = await s.complete(MANEUVER, 'enter_step("lock")', len('enter_step("'))
            assert {"lock", "fire", "maneuver", "reaction"} <= set(steps)
            assert "stay" not in steps
            actions = await s.complete(MANEUVER, 'add("stay")', len('add("'))
            assert {"stay", "rotate", "fire"} <= set(actions)
            params = await s.complete(MANEUVER, 'param("quiet', len('param("'))
            assert "max_power" in params
            # Elsewhere: natives and the scripts' functions.
            words = await s.complete(MANEUVER, "add(\"stay\")", 0)
            assert {"add", "enter_step", "roll", "do_stay", "move_to"} <= set(words)
            # apply = "...": script functions.
            fns = await s.complete(BASIC, 'apply = "do_stay"', len('apply = "'))
            assert {"do_stay", "do_rotate", "maneuver_legal"} <= set(fns)
            # A TOML key of an action table, from the schema.
            s.edit(BASIC, 'apply = "do_stay"\n', 'apply = "do_stay"\n\n')
            keys = await s.complete(BASIC, 'apply = "do_stay"\n\n', len('apply = "do_stay"\n'))
            assert {"text", "apply", "doc"} <= set(keys)

    run(body())


def test_definitions_and_references_cross_toml_and_scripts(folder):
    async def body():
        async with Session(folder) as s:
            s.open(BASIC)
            s.open(MANEUVER)
            # apply = "do_stay" -> the script function.
            assert await s.definition(BASIC, 'apply = "do_stay"', 10) == [(MANEUVER, s.line_of(MANEUVER, "fn do_stay"))]
            # add("stay") -> the action's table.
            assert await s.definition(MANEUVER, 'add("stay")', 6) == [(BASIC, s.line_of(BASIC, "[actions.stay]"))]
            # A call of a function defined in another file.
            s.open(EVALUATE)
            assert await s.definition(EVALUATE, "firing_pairs(", 3) == [(GEOMETRY, s.line_of(GEOMETRY, "fn firing_pairs"))]
            refs = await s.references(BASIC, 'apply = "do_stay"', 10)
            assert refs == sorted([(BASIC, s.line_of(BASIC, 'apply = "do_stay"')), (MANEUVER, s.line_of(MANEUVER, "fn do_stay"))])
            refs = await s.references(MANEUVER, 'enter_step("lock")', len('enter_step("'))
            assert (BASIC, s.line_of(BASIC, "[steps.lock]")) in refs
            assert len([r for r in refs if r[0] == MANEUVER]) >= 4

    run(body())


def test_an_override_leads_to_the_function_it_replaces(folder):
    async def body():
        # An extending variant with a script of its own that overrides a
        # function of sirius-basic's and calls the original.
        child = folder / "variants" / "child"
        child.mkdir()
        (child / "variant.toml").write_text(
            '[variant]\nname = "child"\nextends = "../sirius-basic"\nscripts = ["more.rhai"]\n'
        )
        (child / "more.rhai").write_text("fn do_stay() {\n    super_do_stay();\n}\n")
        async with Session(folder) as s:
            s.open("variants/child/variant.toml")
            s.open("variants/child/more.rhai")
            await s.until("variants/child/variant.toml", lambda ds: ds == [])
            maneuver_line = s.line_of(MANEUVER, "fn do_stay")
            # On the override's name: the definition it replaces.
            assert await s.definition("variants/child/more.rhai", "do_stay", 1) == [(MANEUVER, maneuver_line)]
            # super_do_stay(): the same.
            assert await s.definition("variants/child/more.rhai", "super_do_stay", 7) == [(MANEUVER, maneuver_line)]
            # The action's apply, seen from the child: the override in force.
            hover = await s.hover(BASIC, 'apply = "do_stay"', 10)
            assert "fn do_stay()" in hover

    run(body())


def test_rename_a_function_and_an_action_across_the_folder(folder):
    async def body():
        async with Session(folder) as s:
            s.open(BASIC)
            s.open(MANEUVER)
            doc, pos = s.at(MANEUVER, "fn do_stay", 4)
            edit = await s.client.text_document_rename_async(types.RenameParams(text_document=doc, position=pos, new_name="do_hold"))
            changes = {types_path(k): v for k, v in edit.changes.items()}
            assert set(changes) == {str(s.path(BASIC)), str(s.path(MANEUVER))}
            [e] = changes[str(s.path(BASIC))]
            assert e.new_text == "do_hold" and e.range.start.line == s.line_of(BASIC, 'apply = "do_stay"')

            doc, pos = s.at(BASIC, "[actions.fire]", 10)
            edit = await s.client.text_document_rename_async(types.RenameParams(text_document=doc, position=pos, new_name="shoot"))
            changes = {Path(types_path(k)).relative_to(folder).as_posix(): v for k, v in edit.changes.items()}
            assert BASIC in changes and "scripts/sirius/fire.rhai" in changes
            fire = s.path("scripts/sirius/fire.rhai").read_text().splitlines()
            for e in changes["scripts/sirius/fire.rhai"]:
                line = fire[e.range.start.line]
                assert line[e.range.start.character : e.range.end.character] == "fire"
                assert line[: e.range.start.character].rstrip().endswith('add("') or "add_all(\"" in line

            # A bad name is refused.
            with pytest.raises(Exception):
                await s.client.text_document_rename_async(types.RenameParams(text_document=doc, position=pos, new_name="2 shots"))

    run(body())
