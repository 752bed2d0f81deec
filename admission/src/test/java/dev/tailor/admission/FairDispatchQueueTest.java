package dev.tailor.admission;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.lists;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class FairDispatchQueueTest {

    private record Req(int disk, int seq) {}

    @Test
    void theDoorIsOpen_whileFewerThanDepthAreOut_thenRequestsWait() {
        FairDispatchQueue<Req> door = new FairDispatchQueue<>(new double[] {1, 1}, 2, 0);
        assertThat(door.offer(0, 10, new Req(0, 0))).isTrue();
        assertThat(door.offer(1, 10, new Req(1, 0))).isTrue();
        assertThat(door.offer(0, 10, new Req(0, 1))).isFalse();
        assertThat(door.outstanding()).isEqualTo(2);
        assertThat(door.waiting()).isEqualTo(1);
        assertThat(door.completed()).isEqualTo(new Req(0, 1));
        assertThat(door.outstanding()).isEqualTo(2);
        assertThat(door.completed()).isNull();
        assertThat(door.completed()).isNull();
        assertThat(door.outstanding()).isZero();
    }

    /**
     * An abandoned request leaves at its turn without taking the place or a share: were its cost (100)
     * charged to disk 0, disk 1 would go next; as it is not, disk 0's next request wins the tie.
     */
    @Test
    void anAbandonedRequest_isSkippedUncharged() {
        FairDispatchQueue<Req> door = new FairDispatchQueue<>(new double[] {1, 1}, 1, 0);
        assertThat(door.offer(0, 0, new Req(0, -1))).isTrue();
        door.offer(0, 100, new Req(0, 0));
        door.offer(0, 10, new Req(0, 1));
        door.offer(1, 10, new Req(1, 0));
        List<Req> asked = new ArrayList<>();

        Req next = door.completed(r -> {
            asked.add(r);
            return r.equals(new Req(0, 0));
        });

        assertThat(asked).containsExactly(new Req(0, 0), new Req(0, 1));
        assertThat(next).isEqualTo(new Req(0, 1));
        assertThat(door.waiting()).isEqualTo(1);
        assertThat(door.outstanding()).isEqualTo(1);
        assertThat(door.completed()).isEqualTo(new Req(1, 0));
        assertThat(door.completed(r -> true)).isNull();
        assertThat(door.outstanding()).isZero();
    }

    /** Every waiting request abandoned: the door empties and nothing is out. */
    @Test
    void whenEveryWaitingRequestIsAbandoned_nothingIsLetIn() {
        FairDispatchQueue<Req> door = new FairDispatchQueue<>(new double[] {1, 1}, 1, 0);
        door.offer(0, 0, new Req(0, -1));
        door.offer(0, 10, new Req(0, 0));
        door.offer(1, 10, new Req(1, 0));

        assertThat(door.completed(r -> true)).isNull();
        assertThat(door.waiting()).isZero();
        assertThat(door.outstanding()).isZero();
        assertThat(door.offer(1, 10, new Req(1, 1)))
                .as("the door is open again")
                .isTrue();
    }

    /** Two disks waiting all along, weights 3 : 1, equal costs: three of the first for each of the second. */
    @Test
    void continuouslyWaitingDisks_areLetInInProportionToTheirWeights() {
        FairDispatchQueue<Req> door = new FairDispatchQueue<>(new double[] {300, 100}, 1, 0);
        assertThat(door.offer(0, 0, new Req(0, -1))).isTrue(); // holds the one place
        for (int i = 0; i < 100; i++) {
            door.offer(0, 10, new Req(0, i));
            door.offer(1, 10, new Req(1, i));
        }
        int[] letIn = new int[2];
        for (int i = 0; i < 80; i++) {
            letIn[door.completed().disk()]++;
        }
        assertThat(letIn[0]).isBetween(59, 61);
        assertThat(letIn[1]).isBetween(19, 21);
    }

    /**
     * Disk 1 waits all along; disk 0 is quiet for a while, then sends a batch. Without a lag the batch
     * starts level with the backlog (its first request at the virtual time, 9.9 s, the backlog's next at
     * 10.0; ties go to the lower disk) and alternates with it from its third request (equal weights);
     * with a lag of 0.5 s of its baseline (weight 100 per second, cost 10: five requests) five more of it
     * go first.
     */
    @Test
    void aBatchAfterAQuietSpell_goesAheadForTheLag_thenTakesItsShare() {
        for (double lag : new double[] {0, 0.5}) {
            FairDispatchQueue<Req> door = new FairDispatchQueue<>(new double[] {100, 100}, 1, lag);
            assertThat(door.offer(1, 0, new Req(1, -1))).isTrue();
            for (int i = 0; i < 200; i++) {
                door.offer(1, 10, new Req(1, i));
            }
            for (int i = 0; i < 100; i++) {
                assertThat(door.completed().disk()).isEqualTo(1); // disk 0 is quiet: 10 s of disk 1's
            }
            for (int i = 0; i < 20; i++) {
                door.offer(0, 10, new Req(0, i));
            }
            StringBuilder order = new StringBuilder();
            for (int i = 0; i < 12; i++) {
                order.append(door.completed().disk());
            }
            assertThat(order.toString()).as("lag %s", lag).isEqualTo(lag == 0 ? "001010101010" : "000000010101");
        }
    }

    /**
     * For random arrivals and completions: never more than depth out; a request waits only while depth
     * are out; every request goes exactly once; each disk's requests go in arrival order.
     */
    @Test
    void property_workConserving_everyRequestOnce_inArrivalOrderPerDisk() {
        qt().withExamples(300)
                .forAll(
                        integers().between(1, 4),
                        integers().between(0, 3),
                        lists().of(integers().between(-1, 2)).ofSizeBetween(0, 300))
                .checkAssert((depth, lagTenths, ops) -> {
                    FairDispatchQueue<Req> door =
                            new FairDispatchQueue<>(new double[] {50, 100, 200}, depth, lagTenths / 10.0);
                    Map<Integer, Integer> nextSeq = new HashMap<>();
                    Map<Integer, Integer> sentSeq = new HashMap<>();
                    List<Req> sent = new ArrayList<>();
                    ArrayDeque<Req> out = new ArrayDeque<>();
                    int offered = 0;
                    for (int op : ops) {
                        if (op < 0) {
                            if (out.isEmpty()) {
                                continue;
                            }
                            out.pollFirst();
                            Req next = door.completed();
                            if (next != null) {
                                out.addLast(next);
                                sent.add(next);
                            }
                        } else {
                            int seq = nextSeq.merge(op, 1, Integer::sum) - 1;
                            Req r = new Req(op, seq);
                            offered++;
                            if (door.offer(op, 1 + (seq % 7), r)) {
                                out.addLast(r);
                                sent.add(r);
                            }
                        }
                        assertThat(door.outstanding()).isEqualTo(out.size()).isLessThanOrEqualTo(depth);
                        if (door.waiting() > 0) {
                            assertThat(door.outstanding()).isEqualTo(depth);
                        }
                        assertThat(sent.size() + door.waiting()).isEqualTo(offered);
                    }
                    for (Req r : sent) {
                        int expected = sentSeq.merge(r.disk(), 1, Integer::sum) - 1;
                        assertThat(r.seq()).isEqualTo(expected);
                    }
                });
    }

    /**
     * Why: the option finishTag. Disk 1 was charged 10 for a request that waited, so its tag is 10; disk 0,
     * quiet until now, tag 0, sends a request of 100 after disk 1's two of 10. By start tag disk 0 starts
     * at 0, below disk 1's 10, and its large request goes first though it arrived last; by finish tag it
     * finishes at 100 against disk 1's 20 and then 30, so it goes after the two small ones.
     */
    @Test
    void finishTag_letsALargeRequestGoAfterTheSmallOnesThatWouldFinishBeforeIt() {
        for (boolean finish : new boolean[] {false, true}) {
            FairDispatchQueue<Req> door = new FairDispatchQueue<>(new double[] {1, 1}, 1, 0, finish);
            assertThat(door.offer(0, 0, new Req(0, -1))).isTrue();
            assertThat(door.offer(1, 10, new Req(1, 0))).isFalse();
            assertThat(door.completed()).isEqualTo(new Req(1, 0));
            Req small1 = new Req(1, 1);
            Req small2 = new Req(1, 2);
            Req large = new Req(0, 0);
            assertThat(door.offer(1, 10, small1)).isFalse();
            assertThat(door.offer(1, 10, small2)).isFalse();
            assertThat(door.offer(0, 100, large)).isFalse();

            List<Req> order = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                order.add(door.completed());
            }

            assertThat(order)
                    .as("finishTag %s", finish)
                    .containsExactlyElementsOf(
                            finish ? List.of(small1, small2, large) : List.of(large, small1, small2));
            assertThat(door.completed()).isNull();
        }
    }

    @Test
    void badArguments_areNamed() {
        assertThatThrownBy(() -> new FairDispatchQueue<Req>(new double[] {1, Double.NaN}, 1, 0))
                .hasMessage(
                        "weightsCostUnitsPerSecond[1] : NaN (expected: a finite number of cost units per second > 0)");
        assertThatThrownBy(() -> new FairDispatchQueue<Req>(new double[] {1}, 0, 0))
                .hasMessage("depth : 0 (expected: >= 1)");
        assertThatThrownBy(() -> new FairDispatchQueue<Req>(new double[] {1}, 1, Double.POSITIVE_INFINITY))
                .hasMessage("lagSeconds : Infinity (expected: a finite number >= 0)");
        assertThatThrownBy(() -> new FairDispatchQueue<Req>(new double[0], 1, 0))
                .hasMessageStartingWith("weightsCostUnitsPerSecond : []");
        FairDispatchQueue<Req> door = new FairDispatchQueue<>(new double[] {1}, 1, 0);
        assertThatThrownBy(() -> door.offer(1, 1, new Req(1, 0)))
                .hasMessage("disk : 1 (expected: 0 .. 0, one of the door's disks)");
        assertThatThrownBy(() -> door.offer(0, -1, new Req(0, 0))).hasMessage("costUnits : -1 (expected: >= 0)");
        assertThatThrownBy(door::completed).isInstanceOf(IllegalStateException.class);
    }
}
