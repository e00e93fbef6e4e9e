"""Mulan label files are parsed with defusedxml: entity expansion and external entities
are refused by the parser, whatever the expat version."""

from __future__ import annotations

import time

import pytest

import mlw
from mlw.io import DataFormatError, read_label_xml

ARFF = "@relation r\n@attribute x numeric\n@attribute a {0,1}\n@attribute b {0,1}\n@data\n1,0,1\n"

BILLION_LAUGHS = """<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
 <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
 <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
 <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
 <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
 <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
]>
<labels xmlns="http://mulan.sourceforge.net/labels"><label name="&lol9;"/><label name="b"/></labels>
"""

QUADRATIC = ('<?xml version="1.0"?>\n<!DOCTYPE q [<!ENTITY a "' + "x" * 50_000 + '">]>\n'
             '<labels><label name="' + "&a;" * 50_000 + '"/></labels>\n')

EXTERNAL = """<?xml version="1.0"?>
<!DOCTYPE labels [<!ENTITY secret SYSTEM "file:///etc/passwd">]>
<labels><label name="&secret;"/><label name="b"/></labels>
"""

EXTERNAL_DTD = """<?xml version="1.0"?>
<!DOCTYPE labels SYSTEM "http://example.invalid/labels.dtd">
<labels><label name="a"/><label name="b"/></labels>
"""


@pytest.mark.parametrize("text,pattern", [
    (BILLION_LAUGHS, r"entity declarations are not allowed in a label file \(entity 'lol'\)"),
    (QUADRATIC, r"entity declarations are not allowed in a label file \(entity 'a'\)"),
    (EXTERNAL, r"entity declarations are not allowed in a label file \(entity 'secret'\)"),
])
def test_entity_attacks_are_refused_quickly(tmp_path, text, pattern):
    (tmp_path / "r.arff").write_text(ARFF)
    (tmp_path / "r.xml").write_text(text)
    start = time.process_time()
    with pytest.raises(DataFormatError, match=r"^r\.xml: " + pattern):
        mlw.load_dataset(tmp_path / "r.arff")
    assert time.process_time() - start < 2


def test_external_dtd_is_not_fetched_and_plain_labels_still_load(tmp_path):
    (tmp_path / "r.xml").write_text(EXTERNAL_DTD)
    assert read_label_xml(tmp_path / "r.xml") == ["a", "b"]  # parsed, nothing fetched
    (tmp_path / "r.arff").write_text(ARFF)
    (tmp_path / "r.xml").write_text('<labels xmlns="http://mulan.sourceforge.net/labels">'
                                    '<label name="b"/><label name="a"/></labels>')
    assert mlw.load_dataset(tmp_path / "r.arff").label_names == ["b", "a"]


def test_deeply_nested_xml_is_a_format_error(tmp_path):
    p = tmp_path / "deep.xml"
    p.write_text("<labels>" + "<g>" * 100_000 + '<label name="a"/>' + "</g>" * 100_000
                 + "</labels>")
    try:
        names = read_label_xml(p)
    except DataFormatError as exc:
        assert str(exc).startswith("deep.xml")
    else:
        assert names == ["a"]
