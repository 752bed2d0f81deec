package dev.tailor.common;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class NumbersTest {

    @Test
    void format_wholeWithoutAPoint_elseThreeSignificantDigitsDownToTwoDecimals() {
        assertThat(Numbers.format(20)).isEqualTo("20");
        assertThat(Numbers.format(-1)).isEqualTo("-1");
        assertThat(Numbers.format(123.456)).isEqualTo("123");
        assertThat(Numbers.format(12.345)).isEqualTo("12.3");
        assertThat(Numbers.format(1.2345)).isEqualTo("1.23");
        assertThat(Numbers.format(0.0512)).isEqualTo("0.05");
        assertThat(Numbers.format(-12.345)).isEqualTo("-12.3");
        assertThat(Numbers.format(1e13)).isEqualTo("10000000000000");
        assertThat(Numbers.format(Double.NaN)).isEqualTo("–");
    }
}
