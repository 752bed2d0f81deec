package dev.tailor.common;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.Map;
import org.junit.jupiter.api.Test;

class LocationsTest {

    record Weights(double alpha, int count) {}

    record State(int rounds, Map<String, Weights> groups) {}

    private static String told(ObjectMapper mapper, String text) {
        JacksonException e = catchThrowableOfType(JacksonException.class, () -> mapper.readValue(text, State.class));
        assertThat(e).as("refused: %s", text).isNotNull();
        Locations at = Locations.of(mapper, text);
        return at.problem(e, StrictReader::expected).message() + at.atLine(e);
    }

    @Test
    void aPrimitiveLeftOut_isMissing_atTheLineOfItsMapping() {
        String text = "{\n  \"rounds\": 3,\n  \"groups\": {\n    \"a\": {\n      \"count\": 1\n    }\n  }\n}\n";
        assertThat(told(StrictReader.json(), text)).isEqualTo("groups.a.alpha: missing (expected: a number) at line 4");
    }

    @Test
    void aTopLevelPrimitiveLeftOut_isMissing_atTheDocumentsStart() {
        String text = "{\n  \"groups\": {\n    \"a\": {\"count\": 1, \"alpha\": 2}\n  }\n}\n";
        assertThat(told(StrictReader.json(), text)).isEqualTo("rounds: missing (expected: a whole number) at line 1");
    }

    @Test
    void aPrimitiveWrittenAsNull_isThatValue_atItsLine() {
        String json = "{\n  \"rounds\": 3,\n  \"groups\": {\"a\": {\n    \"alpha\": null,\n    \"count\": 1}}\n}\n";
        assertThat(told(StrictReader.json(), json)).isEqualTo("groups.a.alpha: null (expected: a number) at line 4");
        String yaml = "rounds: 3\ngroups:\n  a:\n    count: 1\n    alpha: ~\n";
        assertThat(told(StrictReader.yaml(), yaml)).isEqualTo("groups.a.alpha: ~ (expected: a number) at line 5");
    }

    @Test
    void aReadingLimit_isToldWhereReadingStopped() {
        String text = "{\n  \"rounds\": 3,\n  \"groups\": {\"a\": {\n    \"alpha\": 1" + "1".repeat(1200) + "}}}";
        JacksonException e = catchThrowableOfType(
                JacksonException.class, () -> StrictReader.json().readValue(text, State.class));
        assertThat(StrictReader.line(e)).isZero();
        assertThat(Locations.of(StrictReader.json(), text).where(e)).isEqualTo(" at line 4");
    }
}
