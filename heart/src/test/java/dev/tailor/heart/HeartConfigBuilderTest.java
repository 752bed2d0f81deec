package dev.tailor.heart;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** The builder: its defaults are the design's constants and our departures; build() checks every field. */
class HeartConfigBuilderTest {

    @Test
    void defaults_equalTheConstantsAsTheyWereWrittenOut() {
        HeartConfig written = new HeartConfig(
                0.2,
                0.8,
                0.2,
                false,
                0.30,
                0,
                1.0,
                1_000_000,
                HeartConfig.Grouping.NODE,
                true,
                true,
                10,
                2.0,
                0.9,
                0.05,
                Math.sqrt(6) / Math.PI,
                false,
                true,
                0.5);
        assertThat(HeartConfig.builder().build()).isEqualTo(written).isEqualTo(HeartConfig.DEFAULTS);
        assertThat(HeartConfig.PAPER)
                .isEqualTo(new HeartConfig(
                        0.2,
                        0.8,
                        0.2,
                        true,
                        0.30,
                        0,
                        1.0,
                        1_000_000,
                        HeartConfig.Grouping.NODE,
                        true,
                        false,
                        0,
                        2.0,
                        0.9,
                        0,
                        0,
                        false,
                        false,
                        0));
    }

    @Test
    void toBuilder_changesOnlyWhatIsSet() {
        HeartConfig serial = HeartConfig.DEFAULTS.toBuilder().parallel(false).build();
        assertThat(serial.parallel()).isFalse();
        assertThat(serial.toBuilder().parallel(true).build()).isEqualTo(HeartConfig.DEFAULTS);
    }

    @Test
    void build_checksEveryField_namingIt() {
        // alphaMin above the default alphaMax is fine once alphaMax is raised too, in either order.
        assertThat(HeartConfig.builder().alphaMin(0.9).alphaMax(0.95).build().alphaMin())
                .isEqualTo(0.9);
        HeartConfig.Builder inverted = HeartConfig.builder().alphaMin(0.9);
        assertThatThrownBy(inverted::build).hasMessage("alphaMin : 0.9 (expected: <= alphaMax, 0.8)");
        HeartConfig.Builder noGrouping = HeartConfig.builder().grouping(null);
        assertThatThrownBy(noGrouping::build).hasMessage("grouping : null (expected: NODE or REPLICA)");
        HeartConfig.Builder tooFewUnits = HeartConfig.builder().flowUnits(10);
        assertThatThrownBy(tooFewUnits::build).hasMessageStartingWith("flowUnits : 10 (expected: ");
    }
}
