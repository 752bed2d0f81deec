package dev.tailor.common;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

class LenientTreeTest {

    private static final ObjectMapper YAML =
            StrictReader.yaml().copy().disable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);

    @Test
    void readsPastADuplicateKey_andYamlsNonFiniteFloats_keepingTheFirstValue() {
        LenientTree read = LenientTree.read(YAML, "a: 1\nb: {c: .nan, d: [-.Inf]}\na: 2\n");

        assertThat(read).isNotNull();
        assertThat(read.tree().get("a").intValue()).isEqualTo(1);
        assertThat(read.tree().get("b").get("c").doubleValue()).isNaN();
        assertThat(read.tree().get("b").get("d").get(0).doubleValue()).isEqualTo(Double.NEGATIVE_INFINITY);
        assertThat(read.nonFinite())
                .containsExactly(java.util.Map.entry("b.c", ".nan"), java.util.Map.entry("b.d[0]", "-.Inf"));
        assertThat(read.duplicates()).hasSize(1);
        LenientTree.Duplicate duplicate = read.duplicates().get(0);
        assertThat(duplicate.path()).isEqualTo("a");
        assertThat(duplicate.at().getLineNr()).isEqualTo(3);
        assertThat(duplicate.first().getLineNr()).isEqualTo(1);
        assertThat(duplicate.problem(" at line 1").message())
                .isEqualTo("a: duplicate key (expected: each key once per mapping; the first, at line 1, is the one"
                        + " checked)");
    }

    @Test
    void aDuplicateKeyInJson_isToldInJsonsWords() {
        // Was YAML's "each key once per mapping" for a document read as JSON, which has objects.
        LenientTree read = LenientTree.read(
                StrictReader.json().copy().disable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION),
                "{\"a\": 1,\n \"a\": 2}");

        assertThat(read.duplicates()).hasSize(1);
        assertThat(read.duplicates().get(0).problem(" at line 1").message())
                .isEqualTo("a: duplicate key (expected: each key once per object; the first, at line 1, is the one"
                        + " checked)");
    }

    @Test
    void aSyntaxError_isNotReadPast_butFound_afterWhatAStrictReadStopsAt() {
        String text = "a: .nan\nb: [1, 2\n";

        assertThat(LenientTree.read(YAML, text)).isNull();
        assertThat(LenientTree.syntaxError(YAML, text)).isNotNull();
        assertThat(StrictReader.line(LenientTree.syntaxError(YAML, text))).isEqualTo(3);
        assertThat(LenientTree.syntaxError(YAML, "a: .nan\na: 1\n")).isNull();
    }

    @Test
    void related_isAPathAndWhatItHolds_notAFieldWhoseNameStartsAlike() {
        assertThat(Problem.related("exports[0]", "exports[0].size")).isTrue();
        assertThat(Problem.related("exports[0].size", "exports")).isTrue();
        assertThat(Problem.related("a.b", "a.b")).isTrue();
        assertThat(Problem.related("exports[0].size", "exports[0].sizeBytes")).isFalse();
        assertThat(Problem.related("exports[1]", "exports[10]")).isFalse();
    }

    @Test
    void put_setsOrTakesOutTheFieldAtAPath_andSaysWhetherItCould() throws Exception {
        com.fasterxml.jackson.databind.JsonNode tree = YAML.readTree("a: {b: 1}\nc: [1, 2]\n");
        com.fasterxml.jackson.databind.JsonNode seven = YAML.readTree("7");

        assertThat(LenientTree.put(tree, "a.b", seven)).isTrue();
        assertThat(tree.get("a").get("b").intValue()).isEqualTo(7);
        assertThat(LenientTree.put(tree, "a.new", seven)).isTrue();
        assertThat(tree.get("a").get("new").intValue()).isEqualTo(7);
        assertThat(LenientTree.put(tree, "c[1]", null)).isTrue();
        assertThat(tree.get("c")).hasSize(2);
        assertThat(tree.get("c").get(1).isNull()).isTrue();
        assertThat(LenientTree.put(tree, "a.b", null)).isTrue();
        assertThat(tree.get("a").has("b")).isFalse();
        assertThat(LenientTree.put(tree, "a.b", null)).as("already out").isFalse();
        assertThat(LenientTree.put(tree, "c[5]", seven))
                .as("past the list's end")
                .isFalse();
        assertThat(LenientTree.put(tree, "missing.x", seven)).as("no parent").isFalse();
    }
}
