package dev.tailor.common;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class UnknownFieldsTest {

    record Pair(String a, Integer b) {}

    record Doc(Pair lead, List<Pair> pairs, Map<String, Pair> byName) {}

    private static final String KNOWN_PAIR = " (expected one of a, b)";

    private static List<String> unknownOf(ObjectMapper mapper, String text) throws Exception {
        StrictReader.UnknownFields unknown = new StrictReader.UnknownFields();
        Doc doc = unknown.reader(mapper, Doc.class).readValue(text);
        assertThat(doc).isNotNull();
        return unknown.problems().stream().map(Problem::message).toList();
    }

    @Test
    void json_everyUnknownField_isCollected_withItsPath_wherever_itStandsInItsRecord() throws Exception {
        // First, between and after the known fields; a record missing a field, and one complete early (its
        // last field read before an unknown one), whose unknown fields Jackson hands over at different points.
        String text = """
                {
                  "x": 1,
                  "lead": {"c": 1, "a": "p", "b": 2, "d": [1, {"e": 2}], "f": {"a": 1}},
                  "pairs": [
                    {"a": "q", "rps": 3},
                    {"z": true, "b": 4},
                    {"a": "r", "y": {"a": "s"}, "b": 5, "w": null}
                  ],
                  "byName": {"k": {"v": 1, "a": "t"}},
                  "tail": "t"
                }
                """;
        assertThat(unknownOf(StrictReader.json(), text))
                .containsExactlyInAnyOrder(
                        "x: unknown field (expected one of byName, lead, pairs)",
                        "lead.c: unknown field" + KNOWN_PAIR,
                        "lead.d: unknown field" + KNOWN_PAIR,
                        "lead.f: unknown field" + KNOWN_PAIR,
                        "pairs[0].rps: unknown field" + KNOWN_PAIR,
                        "pairs[1].z: unknown field" + KNOWN_PAIR,
                        "pairs[2].y: unknown field" + KNOWN_PAIR,
                        "pairs[2].w: unknown field" + KNOWN_PAIR,
                        "byName.k.v: unknown field" + KNOWN_PAIR,
                        "tail: unknown field (expected one of byName, lead, pairs)");
    }

    @Test
    void yaml_everyUnknownField_isCollected_withItsPath() throws Exception {
        String text = "pairs:\n  - a: q\n    rps: 3\n    b: 1\n    c: [2]\n    d: {e: 1}\nlead: {x: 1}\nextra: 0\n";
        assertThat(unknownOf(StrictReader.yaml(), text))
                .containsExactlyInAnyOrder(
                        "pairs[0].rps: unknown field" + KNOWN_PAIR,
                        "pairs[0].c: unknown field" + KNOWN_PAIR,
                        "pairs[0].d: unknown field" + KNOWN_PAIR,
                        "lead.x: unknown field" + KNOWN_PAIR,
                        "extra: unknown field (expected one of byName, lead, pairs)");
    }

    @Test
    void aDocumentWithNoUnknownField_collectsNone_andTheMappersThemselvesStillRefuseOne() throws Exception {
        assertThat(unknownOf(StrictReader.json(), "{\"pairs\": [{\"a\": \"q\", \"b\": 1}]}"))
                .isEmpty();
        // Only a reader that collects reads on: the mappers stay strict for every other reader.
        JacksonException e = catchThrowableOfType(
                JacksonException.class, () -> StrictReader.json().readValue("{\"pairs\": [{\"c\": 1}]}", Doc.class));
        assertThat(StrictReader.problem(e, StrictReader::expected).message())
                .isEqualTo("pairs[0].c: unknown field" + KNOWN_PAIR);
    }

    @Test
    void aTypeErrorStillStopsTheRead_asItIs() {
        StrictReader.UnknownFields unknown = new StrictReader.UnknownFields();
        JacksonException e = catchThrowableOfType(
                JacksonException.class,
                () -> unknown.reader(StrictReader.json(), Doc.class)
                        .readValue("{\"x\": 1, \"pairs\": [{\"b\": \"two\", \"c\": 3}]}"));
        assertThat(StrictReader.problem(e, StrictReader::expected).message())
                .isEqualTo("pairs[0].b: \"two\" (expected: a whole number)");
    }
}
