package dev.tailor.lab;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.Test;

/**
 * The low-load experiment's window on fio's measured time, on given timestamps: a run of {@code --rounds 1
 * --runtime 3 --ramp 1} at 500 IOPS whose fio took 1.7 s to begin its warm-up, with the proxy's metrics exported
 * every second.
 */
class LowLoadWindowTest {

    private static final long S = 1_000_000_000L;
    private static final long MS = 1_000_000L;

    /** fio's process started at 10 s; its warm-up ran 11.7–12.7 s and its measurement 12.7–15.7 s. */
    private static final long START = 10 * S;

    private static final long MEASURED_FROM = 12_700 * MS;
    private static final long MEASURED_TO = 15_700 * MS;

    /** fio wrote its output at 15.7 s (epoch ms 1,000,000) and exited 50 ms later. */
    private static final long EXIT = 15_750 * MS;

    private static final long EXIT_EPOCH_MILLIS = 1_000_050;

    private static LowLoadExperiment.MeasuredTime measured() {
        return LowLoadExperiment.MeasuredTime.of(START, EXIT, EXIT_EPOCH_MILLIS, 1_000_000, 3_000, 3);
    }

    /**
     * Exports written every second at x.00 s and seen at x.05 s, from 10 s to 17 s: the requests so far (500 a
     * second from 11.7 s until 15.7 s: warm-up and measurement) and a window's largest health-check age of 100 ms.
     */
    private static List<LowLoadExperiment.Sampler.Sample> exports() {
        List<LowLoadExperiment.Sampler.Sample> out = new ArrayList<>();
        for (int second = 10; second <= 17; second++) {
            long written = second * S;
            long requests = Math.round(500 * Math.clamp((written - 11_700 * MS) / 1e9, 0.0, 4.0));
            out.add(new LowLoadExperiment.Sampler.Sample(
                    written + 50 * MS, String.format(Locale.ROOT, """
                    tailor_nbd_loop_health_check_window_max_age_seconds{loop="0"} 0.100
                    tailor_nbd_request_loop_unrelated_wait_seconds_bucket{export="disk",le="+Inf"} %d
                    tailor_nbd_request_loop_unrelated_wait_seconds_count{export="disk"} %d
                    tailor_nbd_request_loop_unrelated_wait_seconds_sum{export="disk"} 0
                    """, requests, requests)));
        }
        return out;
    }

    @Test
    void measuredTime_endsWhenFioWroteItsOutput_andBeginsItsRuntimeBefore() {
        assertThat(measured()).isEqualTo(new LowLoadExperiment.MeasuredTime(MEASURED_FROM, MEASURED_TO));
    }

    @Test
    void measuredTime_withoutFiosTimestampOrWithAClockStep_endsAtTheExit_andUsesTheRuntimeSetting() {
        assertThat(LowLoadExperiment.MeasuredTime.of(START, EXIT, EXIT_EPOCH_MILLIS, Double.NaN, Double.NaN, 3))
                .isEqualTo(new LowLoadExperiment.MeasuredTime(EXIT - 3 * S, EXIT));
        assertThat(LowLoadExperiment.MeasuredTime.of(START, EXIT, EXIT_EPOCH_MILLIS, 1_000_200, 3_000, 3))
                .as("a timestamp after the exit: the wall clock stepped")
                .isEqualTo(new LowLoadExperiment.MeasuredTime(EXIT - 3 * S, EXIT));
        assertThat(LowLoadExperiment.MeasuredTime.of(START, 11 * S, 1_000_000, 1_000_000, 3_000, 3))
                .as("never before fio's process started")
                .isEqualTo(new LowLoadExperiment.MeasuredTime(START, 11 * S));
    }

    @Test
    void loopTrace_countsOnlyRequestsInsideFiosMeasuredTime() {
        // fio measured 1,500 reads in 12.7–15.7 s; the exports inside are those of 13, 14 and 15 s: 1,000 between.
        LowLoadExperiment.LoopTrace trace = LowLoadExperiment.loopTrace(exports(), measured());
        assertThat(trace.unrelatedWait().count()).isEqualTo(1_000);
    }

    @Test
    void loopTrace_withFewerThanTwoExportsInside_hasNone() {
        LowLoadExperiment.MeasuredTime short_ = new LowLoadExperiment.MeasuredTime(13_500 * MS, 14_500 * MS);
        assertThat(LowLoadExperiment.loopTrace(exports(), short_)).isEqualTo(LowLoadExperiment.LoopTrace.NONE);
    }

    @Test
    void ages_takeOnlyWindowsInsideFiosMeasuredTime_placedWithinIt() {
        // The windows of 14 s (13–14 s) and 15 s (14–15 s) lie inside 12.7–15.7 s; 13 s's began in the warm-up.
        List<LowLoadExperiment.AgeSample> ages = LowLoadExperiment.ages(exports(), measured());
        assertThat(ages)
                .extracting(LowLoadExperiment.AgeSample::secondsIntoMeasurement)
                .containsExactly(1.35, 2.35);
        assertThat(ages).allSatisfy(a -> assertThat(a.maxAgeMillis()).isEqualTo(100.0));
    }
}
