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
                .isEqualTo("tenants[0].on: \"true\" (expected: true or false)");
        assertThat(problemOf(StrictReader.yaml(), "tenants:\n  - count: two\n").message())
                .isEqualTo("tenants[0].count: two (expected: a whole number)");
        assertThat(problemOf(StrictReader.yaml(), "tenants:\n  - name: [a, b]\n")
                        .message())
                .isEqualTo("tenants[0].name: wrong type (expected: a string)");
        assertThat(problemOf(StrictReader.yaml(), "tenants:\n  - mode: SLOW\n").message())
                .isEqualTo("tenants[0].mode: SLOW (expected: one of FLUID, QUOTA)");
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
    void yaml_duplicateKey_isASyntaxError_withLineAndField() {
        JacksonException e = catchThrowableOfType(
                JacksonException.class,
                () -> StrictReader.yaml().readValue("tenants:\n  - name: a\n    name: b\n", Doc.class));
        assertThat(StrictReader.problem(e, StrictReader::expected)).isNull();
        assertThat(StrictReader.where(e)).isEqualTo(" at line 3, field tenants[0].name");
        assertThat(StrictReader.reason(e)).contains("Duplicate field 'name'");
    }

    @Test
    void json_isAsStrict_andReadsNaNForTheValidatorToName() throws Exception {
        assertThat(problemOf(StrictReader.json(), "{\"tenants\": [{\"on\": 1}]}")
                        .message())
                .isEqualTo("tenants[0].on: 1 (expected: true or false)");
        JacksonException duplicate = catchThrowableOfType(
                JacksonException.class,
                () -> StrictReader.json().readValue("{\"tenants\": [], \"tenants\": []}", Doc.class));
        assertThat(StrictReader.reason(duplicate)).contains("Duplicate field 'tenants'");
        Doc doc = StrictReader.json().readValue("{\"tenants\": [{\"rate\": NaN}]}", Doc.class);
        assertThat(doc.tenants().get(0).rate()).isNaN();
    }

    @Test
    void empty_isToldApart() {
        JacksonException e = catchThrowableOfType(
                JacksonException.class, () -> StrictReader.yaml().readValue("# only a comment\n", Doc.class));
        assertThat(StrictReader.empty(e)).isTrue();
    }
}
