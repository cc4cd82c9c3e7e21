"""Prompt templates: placeholders, escapes, untouched JSON braces, message building."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agenteval.cases.case import Case
from agenteval.cases.prompt import build_messages, render_template
from agenteval.errors import InputError

CASE = Case(
    id="c1",
    input="What is 2+2?",
    context="Arithmetic.",
    expected=4,
    notes="be exact",
    metadata={"lang": "fr", "extra": {"k": [1, 2]}},
)
PLACEHOLDER = re.compile(r"\{[A-Za-z_][A-Za-z0-9_]*\}|\{\{|\}\}")


def test_all_fields_and_metadata() -> None:
    t = "{id}|{input}|{context}|{expected}|{notes}|{lang}|{extra}"
    assert render_template(t, CASE) == 'c1|What is 2+2?|Arithmetic.|4|be exact|fr|{"k": [1, 2]}'


def test_absent_fields_render_empty() -> None:
    assert render_template("[{context}][{expected}][{notes}]", Case(id="x", input="y")) == "[][][]"


def test_json_examples_and_escapes_are_left_alone() -> None:
    t = 'As {"answer": 1, "why": "..."} or { spaced } or {1} for {input}; literal {{input}}'
    assert render_template(t, CASE) == (
        'As {"answer": 1, "why": "..."} or { spaced } or {1} for What is 2+2?; literal {input}'
    )


def test_unknown_placeholder_is_an_input_error_naming_it() -> None:
    with pytest.raises(InputError) as ei:
        render_template("Hello {name}", CASE)
    assert "{name}" in str(ei.value) and ei.value.field == "prompt_template"


@given(st.text().filter(lambda t: not PLACEHOLDER.search(t)))
def test_templates_without_placeholders_are_unchanged(template: str) -> None:
    assert render_template(template, CASE) == template


@given(st.text(min_size=1).filter(lambda s: s.strip()), st.text())
def test_input_with_braces_is_inserted_verbatim(text: str, other: str) -> None:
    case = Case(id="x", input=text + "{input}{{}}{id}" + other)
    assert render_template("<<{input}>>", case) == "<<" + case.input_text() + ">>"


def test_build_messages_string_input() -> None:
    assert build_messages(CASE, None) == [{"role": "user", "content": "What is 2+2?"}]
    assert build_messages(CASE, "Q: {input}") == [{"role": "user", "content": "Q: What is 2+2?"}]


def test_build_messages_conversation() -> None:
    convo = [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "first"},
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": "second"},
    ]
    case = Case(id="x", input=convo)
    plain = build_messages(case, None)
    assert plain == convo and plain is not convo and plain[0] is not convo[0]
    templated = build_messages(case, "[{input}]")
    assert [m["content"] for m in templated] == ["sys", "first", "ok", "[second]"]
    assert convo[-1]["content"] == "second"  # the case is not modified


def test_build_messages_template_needs_a_text_user_message() -> None:
    case = Case(id="x", input=[{"role": "system", "content": "sys"}])
    with pytest.raises(InputError, match="needs a user message"):
        build_messages(case, "{input}")
