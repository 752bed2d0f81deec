package dev.tailor.common;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.List;
import org.junit.jupiter.api.Test;

class StrictReaderTest {

    enum Mode {
        FLUID,
        QUOTA
    }

    record Tenant(String name, Double rate, Integer count, Boolean on, Mode mode) {}

    record Doc(List<Tenant> tenants) {}

    private static Problem problemOf(ObjectMapper mapper, String text) {
        JacksonException e = catchThrowableOfType(JacksonException.class, () -> mapper.readValue(text, Doc.class));
        assertThat(e).as("refused: %s", text).isNotNull();
        return StrictReader.problem(e, StrictReader::expected);
    }

    @Test
    void yaml_unknownField_namesThePathAndTheKnownFields() {
        Problem p = problemOf(StrictReader.yaml(), "tenants:\n  - name: a\n    rat: 3\n");
        assertThat(p.message())
                .isEqualTo("tenants[0].rat: unknown field (expected one of count, mode, name, on, rate)");
    }

    @Test
    void yaml_wrongTypes_areRefused_notCoerced() {
        assertThat(problemOf(StrictReader.yaml(), "tenants:\n  - rate: '30'\n").message())
                .isEqualTo("tenants[0].rate: \"30\" (expected: a number)");
        assertThat(problemOf(StrictReader.yaml(), "tenants:\n  - count: 2.5\n").message())
                .isEqualTo("tenants[0].count: 2.5 (expected: a whole number)");
        assertThat(problemOf(StrictReader.yaml(), "tenants:\n  - on: 'true'\n").message())
                .isEqualTo(
                        "tenants[0].on: \"true\" (expected: true or false, unquoted: in quotes it is a text, not a"
                                + " boolean; in YAML also yes, no, on or off, unquoted, each also Capitalized or in UPPER case)");
        assertThat(problemOf(StrictReader.yaml(), "tenants:\n  - count: two\n").message())
                .isEqualTo("tenants[0].count: two (expected: a whole number)");
        assertThat(problemOf(StrictReader.yaml(), "tenants:\n  - name: [a, b]\n")
                        .message())
                .isEqualTo("tenants[0].name: [a, b] (expected: a string)");
        assertThat(problemOf(StrictReader.yaml(), "tenants:\n  - mode: SLOW\n").message())
                .isEqualTo("tenants[0].mode: SLOW (expected: one of FLUID, QUOTA)");
    }

    @Test
    void yaml_aBoolean_isWhatYamlReadsAsOne_andABadOneIsToldAllThatIsTaken() throws Exception {
        // YAML 1.1's booleans, unquoted, in the three cases the YAML reader knows.
        for (String yes : List.of("true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON")) {
            Doc doc = StrictReader.yaml().readValue("tenants:\n  - on: " + yes + "\n", Doc.class);
            assertThat(doc.tenants().get(0).on()).as(yes).isTrue();
        }
        for (String no : List.of("false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF")) {
            Doc doc = StrictReader.yaml().readValue("tenants:\n  - on: " + no + "\n", Doc.class);
            assertThat(doc.tenants().get(0).on()).as(no).isFalse();
        }
        // Was "(expected: true or false)", though yes, no, on and off were taken as well.
        String takes = " (expected: true or false; in YAML also yes, no, on or off, unquoted, each also Capitalized"
                + " or in UPPER case)";
        assertThat(StrictReader.expected(boolean.class)).isEqualTo(StrictReader.expected(Boolean.class));
        assertThat(problemOf(StrictReader.yaml(), "tenants:\n  - on: maybe\n").message())
                .isEqualTo("tenants[0].on: maybe" + takes);
        // A boolean in quotes is a text: said, after true or false.
        String quoted = " (expected: true or false, unquoted: in quotes it is a text, not a boolean; in YAML also"
                + " yes, no, on or off, unquoted, each also Capitalized or in UPPER case)";
        for (String word : List.of("true", "False", "yes", "OFF")) {
            assertThat(problemOf(StrictReader.yaml(), "tenants:\n  - on: '" + word + "'\n")
                            .message())
                    .isEqualTo("tenants[0].on: \"" + word + "\"" + quoted);
            assertThat(problemOf(StrictReader.yaml(), "tenants:\n  - on: \"" + word + "\"\n")
                            .message())
                    .isEqualTo("tenants[0].on: \"" + word + "\"" + quoted);
        }
        assertThat(problemOf(StrictReader.yaml(), "tenants:\n  - on: y\n").message())
                .isEqualTo("tenants[0].on: y" + takes);
        assertThat(problemOf(StrictReader.yaml(), "tenants:\n  - on: yEs\n").message())
                .isEqualTo("tenants[0].on: \"yEs\"" + takes);
        assertThat(problemOf(StrictReader.yaml(), "tenants:\n  - on: 1\n").message())
                .isEqualTo("tenants[0].on: 1" + takes);
    }

    @Test
    void yaml_nonFiniteFloat_namesTheFieldAndTheValueAsWritten() {
        JacksonException e = catchThrowableOfType(
                JacksonException.class,
                () -> StrictReader.yaml().readValue("tenants:\n  - name: a\n    rate: .nan\n", Doc.class));
        assertThat(StrictReader.problem(e, StrictReader::expected).message())
                .isEqualTo("tenants[0].rate: .nan (expected: a finite number)");
        assertThat(StrictReader.atLine(e)).isEqualTo(" at line 3");
    }

    @Test
    void yaml_duplicateKey_isAProblemOfTheField_inTheProblemWording() {
        JacksonException e = catchThrowableOfType(
                JacksonException.class,
                () -> StrictReader.yaml().readValue("tenants:\n  - name: a\n    name: b\n", Doc.class));
        assertThat(StrictReader.problem(e, StrictReader::expected).message())
                .isEqualTo("tenants[0].name: duplicate key (expected: each key once per mapping)");
        assertThat(StrictReader.where(e)).isEqualTo(" at line 3, field tenants[0].name");
    }

    @Test
    void locations_unknownFieldOfARecord_isAtItsOwnLine_notAtTheEndOfItsMapping() {
        String text = "tenants:\n  - name: a\n    rat: 3\n    count: 2\n    mode: FLUID\n  - name: b\n";
        JacksonException e = catchThrowableOfType(
                JacksonException.class, () -> StrictReader.yaml().readValue(text, Doc.class));
        assertThat(Locations.of(StrictReader.yaml(), text).atLine(e)).isEqualTo(" at line 3");
    }

    @Test
    void locations_aRangeProblem_hasTheLine_andTheValueAsWritten() {
        String text = "tenants:\n  - name: a\n    rate: -5\n  - name: b\n    rate: 1e3\n";
        Locations at = Locations.of(StrictReader.yaml(), text);
        assertThat(at.message(new Problem("tenants[0].rate", -5.0, "a number > 0")))
                .isEqualTo("tenants[0].rate: -5 (expected: a number > 0) at line 3");
        assertThat(at.message(new Problem("tenants[1].rate", 1000.0, "at most 100")))
                .isEqualTo("tenants[1].rate: 1e3 (expected: at most 100) at line 5");
        // A missing field is told at its mapping; a description is kept as is.
        assertThat(at.message(new Problem("tenants[1].count", "missing", "a whole number")))
                .isEqualTo("tenants[1].count: missing (expected: a whole number) at line 4");
        assertThat(at.report("s.yaml", java.util.List.of(new Problem("tenants[0].name", "\"a\"", "unique"))))
                .isEqualTo("s.yaml: tenants[0].name: \"a\" (expected: unique) at line 2");
    }

    @Test
    void locations_json_too() {
        String text = "{\"tenants\": [\n  {\"rate\": -5}\n]}";
        assertThat(Locations.of(StrictReader.json(), text).message(new Problem("tenants[0].rate", -5.0, "> 0")))
                .isEqualTo("tenants[0].rate: -5 (expected: > 0) at line 2");
    }

    @Test
    void reason_leavesOutJacksonsSourceExcerpt_whateverRemarkCarriesIt() {
        JacksonException unclosed = catchThrowableOfType(
                JacksonException.class, () -> StrictReader.json().readValue("{\"tenants\": [}", Doc.class));
        assertThat(StrictReader.reason(unclosed))
                .isEqualTo("found '}' (expected: ']' to close the array)")
                .doesNotContain("Source", "column");
    }

    @Test
    void jsonSyntaxErrors_saidAsWhatWasFoundWhereSomethingElseBelongs() {
        assertThat(jsonSyntax("{\"seed\": 1,\n seed: 2}"))
                .isEqualTo(" at line 2, after field seed: found 's' (expected: a field name in double quotes)");
        assertThat(jsonSyntax("{\"seed\": 1 \"name\": \"a\"}"))
                .isEqualTo(
                        " at line 1, field seed: found '\"' (expected: a comma between fields, or } to close the object)");
        assertThat(jsonSyntax("{\"tenants\": [{}, , {}]}"))
                .isEqualTo(
                        " at line 1, field tenants[1]: found ',' (expected: a value (text in double quotes, a number,"
                                + " an array, an object, true, false or null))");
        assertThat(jsonSyntax("{\"seed\": yes}"))
                .startsWith(" at line 1, field seed: found yes (expected: a value: text in double quotes");
        assertThat(jsonSyntax("{\"seed\" 1}")).endsWith("found '1' (expected: a colon after the field name)");
        assertThat(jsonSyntax("{\"tenants\": [{} {}]}"))
                .endsWith("found '{' (expected: a comma between items, or ] to close the array)");
    }

    private static String jsonSyntax(String text) {
        JacksonException e = catchThrowableOfType(
                JacksonException.class, () -> StrictReader.json().readTree(text));
        return StrictReader.where(e) + ": " + StrictReader.reason(e);
    }

    @Test
    void json_aBadBoolean_isToldJsonsBooleansOnly_andAQuotedOneIsAText() {
        // Was YAML's words for a JSON document, whose booleans are true and false alone.
        assertThat(StrictReader.expected(Boolean.class, true)).isEqualTo("true or false");
        assertThat(StrictReader.expected(boolean.class, true)).isEqualTo(StrictReader.BOOLEAN_JSON);
        assertThat(StrictReader.expected(Boolean.class, false)).isEqualTo(StrictReader.BOOLEAN);
        assertThat(StrictReader.expected(Integer.class, true)).isEqualTo(StrictReader.expected(Integer.class));
    }

    @Test
    void json_aListOrAMapping_isToldAsJsonsArrayOrObject_andYamlKeepsItsWords() {
        // Was YAML's words (a list, a mapping, each key once per mapping) for a JSON document.
        assertThat(StrictReader.expected(List.class, true)).isEqualTo("an array");
        assertThat(StrictReader.expected(String[].class, true)).isEqualTo("an array");
        assertThat(StrictReader.expected(java.util.Map.class, true)).isEqualTo("an object of names to values");
        assertThat(StrictReader.expected(Doc.class, true)).isEqualTo("an object");
        assertThat(StrictReader.expected(List.class, false)).isEqualTo("a list");
        assertThat(StrictReader.expected(java.util.Map.class, false)).isEqualTo("a mapping of names to values");
        JacksonException json =
                refused(StrictReader.json(), "{\"namespaces\": \"default\", \"labels\": 3}", Settings.class);
        assertThat(StrictReader.problem(json, type -> StrictReader.expected(type, true))
                        .message())
                .isEqualTo("namespaces: default (expected: an array)");
        JacksonException twice = refused(StrictReader.json(), "{\"seed\": 1,\n \"seed\": 2}", Settings.class);
        assertThat(StrictReader.problem(twice, StrictReader::expected).message())
                .isEqualTo("seed: duplicate key (expected: each key once per object)");
        JacksonException yaml = refused(StrictReader.yaml(), "{\"seed\": 1,\n \"seed\": 2}", Settings.class);
        assertThat(StrictReader.problem(yaml, StrictReader::expected).message())
                .isEqualTo("seed: duplicate key (expected: each key once per mapping)");
        assertThat(jsonProblem("{\"tenants\": [{\"on\": 1}]}")).isEqualTo("tenants[0].on: 1 (expected: true or false)");
        assertThat(jsonProblem("{\"tenants\": [{\"on\": \"true\"}]}"))
                .isEqualTo("tenants[0].on: \"true\" (expected: true or false, unquoted: in quotes it is a text, not a"
                        + " boolean)");
        assertThat(jsonProblem("{\"tenants\": [{\"on\": \"false\"}]}"))
                .endsWith("(expected: true or false, unquoted: in quotes it is a text, not a boolean)");
        // Not a boolean in JSON, quoted or not: nothing to add.
        assertThat(jsonProblem("{\"tenants\": [{\"on\": \"yes\"}]}"))
                .isEqualTo("tenants[0].on: \"yes\" (expected: true or false)");
        assertThat(jsonProblem("{\"tenants\": [{\"on\": \"True\"}]}"))
                .isEqualTo("tenants[0].on: \"True\" (expected: true or false)");
    }

    private static String jsonProblem(String text) {
        JacksonException e = catchThrowableOfType(
                JacksonException.class, () -> StrictReader.json().readValue(text, Doc.class));
        return StrictReader.problem(e, type -> StrictReader.expected(type, true))
                .message();
    }

    @Test
    void expectedBoolean_addsTheNoteOnlyForABooleanOfItsFormatInQuotes() {
        assertThat(StrictReader.expectedBoolean(false, "maybe")).isEqualTo(StrictReader.BOOLEAN);
        assertThat(StrictReader.expectedBoolean(false, "\"maybe\"")).isEqualTo(StrictReader.BOOLEAN);
        // Unquoted, tRue and y are texts in YAML: a message may quote them, but quotes are not why.
        assertThat(StrictReader.expectedBoolean(false, "\"tRue\"")).isEqualTo(StrictReader.BOOLEAN);
        assertThat(StrictReader.expectedBoolean(false, "\"y\"")).isEqualTo(StrictReader.BOOLEAN);
        assertThat(StrictReader.expectedBoolean(false, "\"On\"")).contains("unquoted: in quotes it is a text");
        assertThat(StrictReader.expectedBoolean(true, "\"On\"")).isEqualTo(StrictReader.BOOLEAN_JSON);
        assertThat(StrictReader.expectedBoolean(true, "\"\"")).isEqualTo(StrictReader.BOOLEAN_JSON);
        assertThat(StrictReader.expectedBoolean(true, null)).isEqualTo(StrictReader.BOOLEAN_JSON);
    }

    @Test
    void json_isAsStrict_andReadsNaNForTheValidatorToName() throws Exception {
        assertThat(problemOf(StrictReader.json(), "{\"tenants\": [{\"on\": 1}]}")
                        .message())
                .isEqualTo("tenants[0].on: 1 (expected: " + StrictReader.BOOLEAN + ")");
        JacksonException duplicate = catchThrowableOfType(
                JacksonException.class,
                () -> StrictReader.json().readValue("{\"tenants\": [], \"tenants\": []}", Doc.class));
        assertThat(StrictReader.reason(duplicate)).contains("Duplicate field 'tenants'");
        Doc doc = StrictReader.json().readValue("{\"tenants\": [{\"rate\": NaN}]}", Doc.class);
        assertThat(doc.tenants().get(0).rate()).isNaN();
    }

    record Floats(double a, Float b, java.util.Map<String, Double> c) {}

    @Test
    void json_aStringWhereANumberBelongs_isRefusedAsTheStringItIs_quoted() {
        // "NaN" and "Infinity" used to be read as the numbers they name, though "30" was refused.
        for (String written : List.of("\"NaN\"", "\"-Infinity\"", "\"30\"", "\" 30\"", "\"1_000\"", "\"0x10\"")) {
            assertThat(problemOf(StrictReader.json(), "{\"tenants\": [{\"rate\": " + written + "}]}")
                            .message())
                    .isEqualTo("tenants[0].rate: " + written + " (expected: a number)");
        }
        assertThat(problemOf(StrictReader.json(), "{\"tenants\": [{\"count\": \"0x10\"}]}")
                        .value())
                .isEqualTo("\"0x10\"");
    }

    @Test
    void aTextNamingANonFiniteNumber_isRefusedForEveryFloatingType() {
        for (String text :
                List.of("{\"a\": \"NaN\"}", "{\"a\": 1, \"b\": \"Infinity\"}", "{\"a\": 1, \"c\": {\"x\": \"NaN\"}}")) {
            JacksonException e = catchThrowableOfType(
                    JacksonException.class, () -> StrictReader.json().readValue(text, Floats.class));
            assertThat(e).as("refused: %s", text).isNotNull();
        }
        assertThat(problemOf(StrictReader.yaml(), "tenants:\n  - rate: NaN\n").message())
                .isEqualTo("tenants[0].rate: \"NaN\" (expected: a number)");
        assertThat(problemOf(StrictReader.yaml(), "tenants:\n  - rate: 'Infinity'\n")
                        .message())
                .isEqualTo("tenants[0].rate: \"Infinity\" (expected: a number)");
    }

    @Test
    void empty_isToldApart() {
        JacksonException e = catchThrowableOfType(
                JacksonException.class, () -> StrictReader.yaml().readValue("# only a comment\n", Doc.class));
        assertThat(StrictReader.empty(e)).isTrue();
    }

    record Settings(Long seed, Integer port, List<String> namespaces, java.util.Map<String, Integer> labels) {}

    private static JacksonException refused(ObjectMapper mapper, String text, Class<?> type) {
        JacksonException e = catchThrowableOfType(JacksonException.class, () -> mapper.readValue(text, type));
        assertThat(e).as("refused: %s", text).isNotNull();
        return e;
    }

    @Test
    void yaml_tab_isToldAtItsOwnLine_inWords() {
        JacksonException e = refused(StrictReader.yaml(), "namespaces:\n  - a\n  - b\n\tport: 30\n", Settings.class);
        assertThat(StrictReader.problem(e, StrictReader::expected)).isNull();
        assertThat(StrictReader.yamlSyntaxError(e)).isTrue();
        assertThat(StrictReader.where(e)).isEqualTo(" at line 4");
        assertThat(StrictReader.reason(e))
                .isEqualTo("found a tab character, which YAML does not allow for indentation (expected: spaces)");
    }

    @Test
    void yaml_fileCutShort_endsTooEarly_atTheProblemsLine() {
        JacksonException mapping = refused(StrictReader.yaml(), "seed: 1\nlabels: {a: 1,\n  b: 2\n", Settings.class);
        assertThat(StrictReader.reason(mapping))
                .isEqualTo("the file ends too early (expected: the rest of the {...} mapping, closed by })");
        assertThat(StrictReader.line(mapping)).isEqualTo(4);
        JacksonException node = refused(StrictReader.yaml(), "seed: 1\nlabels: {a: 1,\n", Settings.class);
        assertThat(StrictReader.reason(node)).isEqualTo("the file ends too early (expected: a value)");
        JacksonException list = refused(StrictReader.yaml(), "namespaces: [a, b\n", Settings.class);
        assertThat(StrictReader.reason(list))
                .isEqualTo("the file ends too early (expected: the rest of the [...] list, closed by ])");
        JacksonException quote = refused(StrictReader.yaml(), "namespaces: ['a\n", Settings.class);
        assertThat(StrictReader.reason(quote)).isEqualTo("the file ends too early (expected: the closing quote)");
    }

    @Test
    void yaml_otherSyntaxErrors_sayTheProblem_notWhatTheParserWasReading() {
        JacksonException e = catchThrowableOfType(
                JacksonException.class, () -> StrictReader.yaml().readTree("seed: 1\nport: a: b\n"));
        assertThat(StrictReader.reason(e)).isEqualTo("mapping values are not allowed here");
        assertThat(StrictReader.where(e)).isEqualTo(" at line 2");
    }

    @Test
    void wholeNumberTooLarge_isTheFieldsProblem_withTheValueAsWritten() {
        JacksonException e = refused(StrictReader.yaml(), "port: 1\nseed: 99999999999999999999999\n", Settings.class);
        assertThat(StrictReader.problem(e, StrictReader::expected).message())
                .isEqualTo("seed: 99999999999999999999999 (expected: a whole number that fits in 64 bits)");
        JacksonException port = refused(StrictReader.json(), "{\"port\": 9999999999}", Settings.class);
        assertThat(StrictReader.problem(port, StrictReader::expected).message())
                .isEqualTo("port: 9999999999 (expected: a whole number that fits in 32 bits)");
    }

    @Test
    void contentAfterTheDocument_isSaidSo() {
        JacksonException json = refused(StrictReader.json(), "{\"seed\": 1}\n{\"seed\": 2}\n", Settings.class);
        assertThat(StrictReader.problem(json, StrictReader::expected).message())
                .isEqualTo("(top level): content after the end of the document"
                        + " (expected: one JSON document, nothing after it)");
        assertThat(StrictReader.atLine(json)).isEqualTo(" at line 2");
        JacksonException yaml = refused(StrictReader.yaml(), "seed: 1\n---\nseed: 2\n", Settings.class);
        assertThat(StrictReader.problem(yaml, StrictReader::expected).value()).isEqualTo(StrictReader.AFTER_THE_END);
    }

    @Test
    void readingLimits_areSaidWithoutJacksonsSettingNames() {
        JacksonException number =
                refused(StrictReader.json(), "{\"seed\":\n 1" + "1".repeat(1200) + "}", Settings.class);
        assertThat(StrictReader.reason(number)).isEqualTo("a number 1201 digits long (expected: at most 1000 digits)");
        JacksonException deep = catchThrowableOfType(
                JacksonException.class, () -> StrictReader.json().readTree("{\"labels\": " + "[".repeat(1200)));
        assertThat(StrictReader.reason(deep))
                .isEqualTo("lists and mappings nested 1001 levels deep (expected: at most 1000 levels)");
        // A reader that knows its document is JSON says it in JSON's words.
        assertThat(StrictReader.reason(deep, true))
                .isEqualTo("arrays and objects nested 1001 levels deep (expected: at most 1000 levels)");
    }

    @Test
    void aTextWhereAListBelongs_isShownAsWritten() {
        JacksonException e = refused(StrictReader.yaml(), "namespaces: default\n", Settings.class);
        assertThat(StrictReader.problem(e, StrictReader::expected).message())
                .isEqualTo("namespaces: default (expected: a list)");
    }

    @Test
    void aLongTextThatReadsLikeANumber_isCutShort_quoted() {
        String digits = "30." + "0".repeat(2000);
        assertThat(problemOf(StrictReader.yaml(), "tenants:\n  - count: '" + digits + "'\n")
                        .message())
                .isEqualTo("tenants[0].count: \"" + digits.substring(0, 57) + "...\" (expected: a whole number)");
    }

    @Test
    void aListOrAMappingOfTheWrongType_isShownAsWritten_onOneLine() {
        assertThat(problemOf(StrictReader.yaml(), "tenants:\n  - rate: [1]\n").message())
                .isEqualTo("tenants[0].rate: [1] (expected: a number)");
        assertThat(problemOf(StrictReader.yaml(), "tenants:\n  - count:\n      - 1\n      - '2'\n")
                        .message())
                .isEqualTo("tenants[0].count: [1, \"2\"] (expected: a whole number)");
        assertThat(problemOf(StrictReader.yaml(), "tenants:\n  - on: {a: 1, b: x y}\n")
                        .message())
                .isEqualTo("tenants[0].on: {a: 1, b: x y} (expected: " + StrictReader.BOOLEAN + ")");
        assertThat(problemOf(StrictReader.yaml(), "tenants: {name: a}\n").message())
                .isEqualTo("tenants: {name: a} (expected: a list)");
        assertThat(problemOf(StrictReader.json(), "{\"tenants\": [{\"rate\": {\"a\": [1, \"x\"]}}]}")
                        .message())
                .isEqualTo("tenants[0].rate: {\"a\": [1, \"x\"]} (expected: a number)");
    }

    @Test
    void aLongListOrMapping_isCutShort() {
        String many = java.util.stream.IntStream.range(0, 1000)
                .mapToObj(i -> "k" + i + ": " + i)
                .collect(java.util.stream.Collectors.joining(", ", "{", "}"));
        assertThat(problemOf(StrictReader.yaml(), "tenants:\n  - name: " + many + "\n")
                        .message())
                .isEqualTo("tenants[0].name: {k0: 0, k1: 1, k2: 2, k3: 3, k4: 4, k5:… (expected: a string)");
    }

    @Test
    void aStructureBoundFromATree_isShownAsWritten() throws Exception {
        com.fasterxml.jackson.databind.JsonNode tree = StrictReader.yaml().readTree("port: [80, '443']\n");
        JacksonException e = catchThrowableOfType(
                JacksonException.class, () -> StrictReader.yaml().treeToValue(tree, Settings.class));
        assertThat(StrictReader.problem(e, StrictReader::expected).message())
                .isEqualTo("port: [80, \"443\"] (expected: a whole number)");
    }
}
