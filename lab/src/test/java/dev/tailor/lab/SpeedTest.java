package dev.tailor.lab;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The simulator's speed line reads as a number at every rate, slow runs included. */
class SpeedTest {

    @Test
    void perSecond_fastRate_inMillions() {
        assertThat(StorageOutput.perSecond(1_254_000)).isEqualTo("1.25 million");
        assertThat(StorageOutput.perSecond(100_000)).isEqualTo("0.10 million");
    }

    @Test
    void perSecond_slowRate_wholeNumberNotZeroMillions() {
        // 11,250 requests in 3.6 s: "0.00 million" said nothing.
        assertThat(StorageOutput.perSecond(11_250 / 3.6)).isEqualTo("3,125");
        assertThat(StorageOutput.perSecond(99_999.4)).isEqualTo("99,999");
    }
}
