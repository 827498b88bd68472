"""Text that is text (core.language): passages that are mostly non-language are flagged; tables with labels,
OCR'd prose and other scripts are language. Real fixture text (copied from the parsed PDFs in shared/fixtures)
and prose written for these tests."""

from __future__ import annotations

from exograph.core.language import MAX_JUNK_SHARE, MIN_WORD_SHARE, language_text, text_is_language, text_language

# tracemonkey-pldi-09.pdf, the figure 12 passage as the parser reads it: the chart's glyphs, then its caption.
FIGURE_GLYPHS = (
    '!"# $!"# %!"# &!"# ’!"# (!!"# )*+,-./#0$1$23# )*+45678#0$1923# )*+6:;<6:,/#0(1$23# '
    ":,,/==+.>?:6;+<6//=#0!1923# :,,/==+@:??A-,8#0$1$23# :,,/==+?.5*;#0%1$23# :,,/==+?=>/B/#0)1!23# "
    ".><57=+).><+.><=+>?+.;</#0$C1C23# .><57=+.><=+>?+.;</#0’1D23# .><57=+.><E>=/+:?*#0$C1$23# "
    ",5?<65FG5E+6/,-6=>B/#0(1!23# ,6;7<5+:/=#0(1&23# ,6;7<5+4*C#0$1)23# ,6;7<5+=8:(#0C1923# "
    "*:</+@564:<+<5H/#0(1(23# *:</+@564:<+27:6.#0(1!23# 4:<8+,56*>,#0%1923# 4:<8+7:6I:F+=-4=#0C1923# "
    "K?</676/<# L5?><56# M/,56*# N547>F/# N:FF#O6:,/# M-?#O6:,/# "
    "Figure 12. Fraction of time spent on major VM activities. The speedup vs. interpreter is shown in "
    "parentheses next to each test."
)
# pm_i1040nr.pdf, a page of the tax table: numbers with no labels.
TAX_TABLE = (
    "11,000 11,050 1,263 1,103 1,263 5,050 5,100 508 508 508 8,050 8,100 820 808 820 11,050 11,100 1,270 "
    "1,108 1,270 5,100 5,150 513 513 513 8,100 8,150 828 813 828 11,100 11,150 1,278 1,113 1,278 5,150 5,200"
)
# tracemonkey-pldi-09.pdf, table 1: numbers with a label on every row (answers "how many traces ...").
BENCHMARK_TABLE = (
    "Loops Trees Traces Aborts Flushes Trees/Loop Traces/Tree Traces/Loop Speedup 3d-cube 25 27 29 3 0 1.1 "
    "1.1 1.2 2.20x 3d-morph 5 8 8 2 0 1.6 1.0 1.6 2.86x 3d-raytrace 10 25 100 10 1 2.5 4.0 10.0 1.18x "
    "access-binary-trees 0 0 0 5 0 - - - 0.93x access-fannkuch 10 34 57 24 0 3.4 1.7 5.7 2.20x"
)
# pp_Seige_of_Vicksburg_Sample_OCR.pdf: OCR'd prose with its misreadings ("VICKSBUEG", "tie earth").
OCR_PROSE = (
    "50 THE SIEGE OF VICKSBUEG. buried itself in tie earth, and exploded, scattering dirt for yards around "
    "and leaving a hole big enough to bury a horse. Another fell on top of the hill and rolled down, "
    "crashing through a tent. The occupants not being at home it failed to find a welcome."
)
# Written for this test: what a scanner's text layer holds for a page of speckles and rules.
OCR_DEBRIS = "~;' ,.:. l1|' .:;~ ^'` |l:. -_;, ';.~ :|;' ^^'. i;:, `~|. ;'l; .:|~ ,;'^ '|.: ~^;:"
PROSE = (
    "The harbour master counted forty-two fishing boats leaving before dawn; by noon the wind had turned and "
    "only a dozen were still out beyond the breakwater."
)
LABELLED_ROWS = "Orchard harvest: apples 1,240 kg, pears 310 kg, plums 95 kg; total 1,645 kg from 3 fields."


def test_a_figures_glyphs_are_flagged() -> None:
    measured = text_language(FIGURE_GLYPHS)
    assert measured.junk >= MAX_JUNK_SHARE and measured.flagged
    assert not text_is_language(FIGURE_GLYPHS)


def test_a_bare_grid_of_numbers_is_flagged_but_a_table_with_labels_is_language() -> None:
    assert text_language(TAX_TABLE).word < MIN_WORD_SHARE and not text_is_language(TAX_TABLE)
    assert text_is_language(BENCHMARK_TABLE)
    assert text_is_language(LABELLED_ROWS)


def test_ocr_prose_with_misreadings_is_language_and_scanner_debris_is_not() -> None:
    assert text_is_language(OCR_PROSE)
    assert not text_is_language(OCR_DEBRIS)


def test_ordinary_prose_and_other_scripts_are_language() -> None:
    assert text_language(PROSE).word > 0.9 and text_is_language(PROSE)
    assert text_is_language("東京は日本の首都であり、人口は約千四百万人です。")
    assert text_is_language("เรียนเลขพี่นวย คณิตศาสตร์ สำหรับนักเรียน")  # Thai: vowel marks are letters too
    assert text_is_language("ذهب الولد إلى المدرسة صباحا")
    assert text_is_language("Замечания к расположению извещателей:____________ Соответствует / с замечаниями")


def test_empty_or_punctuation_only_is_flagged() -> None:
    assert not text_is_language("")
    assert not text_is_language("• - | ...... ____")


def test_language_text_cuts_glyph_runs_and_keeps_the_caption() -> None:
    cut = language_text(FIGURE_GLYPHS)
    assert cut.startswith("Figure 12. Fraction of time spent")
    assert "#" not in cut
    assert language_text(PROSE) == PROSE
    assert language_text(BENCHMARK_TABLE) == BENCHMARK_TABLE
