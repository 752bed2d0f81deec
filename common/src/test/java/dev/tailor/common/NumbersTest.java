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

    @Test
    void bytes_inTheLargestBinaryUnitThatDividesIt_withTheExactCount() {
        assertThat(Numbers.bytes(1 << 20)).isEqualTo("1MiB = 1048576 bytes");
        assertThat(Numbers.bytes(3L << 30)).isEqualTo("3GiB = 3221225472 bytes");
        assertThat(Numbers.bytes(1536)).as("1.5 KiB: no unit divides it").isEqualTo("1536 bytes");
        assertThat(Numbers.bytes(300)).isEqualTo("300 bytes");
        assertThat(Numbers.bytes(1)).isEqualTo("1 byte");
        assertThat(Numbers.bytes(0)).isEqualTo("0 bytes");
    }

    @Test
    void written_isExactWithoutTrailingZerosOrExponent() {
        assertThat(Numbers.written(0.0)).isEqualTo("0");
        assertThat(Numbers.written(-0.0)).isEqualTo("0");
        assertThat(Numbers.written(-1)).isEqualTo("-1");
        assertThat(Numbers.written(-1.5)).isEqualTo("-1.5");
        assertThat(Numbers.written(1e-4)).isEqualTo("0.0001");
        assertThat(Numbers.written(1.00001)).isEqualTo("1.00001");
        assertThat(Numbers.written(2e6)).isEqualTo("2000000");
        assertThat(Numbers.written(0.1 + 0.2)).isEqualTo("0.30000000000000004");
        assertThat(Numbers.written(1e308)).isEqualTo("1e308");
        assertThat(Numbers.written(2.5e-12)).isEqualTo("2.5e-12");
        assertThat(Numbers.written(Double.NaN)).isEqualTo("NaN");
        assertThat(Numbers.written(Double.NEGATIVE_INFINITY)).isEqualTo("-Infinity");
    }

    @Test
    void interval_closedOrOpenBelow_maxValueIsNoBound() {
        assertThat(Numbers.interval(false, 0, 1)).isEqualTo("a number in [0, 1]");
        assertThat(Numbers.interval(true, 0, 1e6)).isEqualTo("a number in (0, 1000000]");
        assertThat(Numbers.interval(false, 0.25, 3.5)).isEqualTo("a number in [0.25, 3.5]");
        assertThat(Numbers.interval(false, 0, Double.MAX_VALUE)).isEqualTo("a finite number >= 0");
        assertThat(Numbers.interval(true, 0, Double.MAX_VALUE)).isEqualTo("a finite number > 0");
    }
}
