package dev.tailor.heart.controller;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * The line {@code tailor heart run} logs from its shutdown hook as a stop (SIGTERM, Ctrl-C) starts: what the
 * stop does, as {@link ControllerLoop#close} and {@link LeaseElector#stop} do it.
 */
class HeartRunStoppingTest {

    @Test
    void stop_saysNoNewRounds_andTheLeaseOnlyWithLeaderElection() {
        // Was: exit 143 with no closing line in the log.
        assertThat(HeartRun.stoppingLine("tailor-heart"))
                .isEqualTo("stopping: no new rounds, a round in flight is interrupted; Lease tailor-heart is released"
                        + " if this replica holds it");
        assertThat(HeartRun.stoppingLine(null)).isEqualTo("stopping: no new rounds, a round in flight is interrupted");
    }
}
