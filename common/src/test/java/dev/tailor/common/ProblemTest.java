package dev.tailor.common;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import org.junit.jupiter.api.Test;

class ProblemTest {

    @Test
    void message_realValues_readAsWritten() {
        assertThat(new Problem("rate", 0.0, "a number > 0").message()).isEqualTo("rate: 0 (expected: a number > 0)");
        assertThat(new Problem("rate", Double.NaN, "a number > 0").message())
                .isEqualTo("rate: NaN (expected: a number > 0)");
        assertThat(new Problem("range", Arrays.asList(1e-6, 1e7, null), "[min, max]").message())
                .isEqualTo("range: [0.000001, 10000000, null] (expected: [min, max])");
    }

    @Test
    void message_otherValues_asIs() {
        assertThat(new Problem("count", 3, "1 .. 2").message()).isEqualTo("count: 3 (expected: 1 .. 2)");
        assertThat(new Problem("name", "\"x y\"", "letters").message()).isEqualTo("name: \"x y\" (expected: letters)");
    }
}
