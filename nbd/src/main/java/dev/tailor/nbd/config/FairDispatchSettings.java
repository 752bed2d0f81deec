package dev.tailor.nbd.config;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import dev.tailor.admission.AdmissionConfig;
import dev.tailor.common.Problem;
import java.util.ArrayList;
import java.util.List;
import java.util.function.ToIntFunction;

/**
 * The fair dispatch door (docs/nbd.md, "Fair dispatch"; docs/admission.md, "Fair dispatch"): at most
 * {@code depth} READs and WRITEs at one backend at once, the rest waiting per export, and each completion
 * lets in the waiting request of the export furthest behind its share (start-time fair queueing over the
 * exports, weighted by their baselines, with a lag of admission's W·Δ). One door per backend
 * ({@link ExportConfig#backend}), each with this depth, with segment admission on (what admission admits
 * goes through the doors) or off (the doors alone). FLUSH, TRIM and WRITE_ZEROES pass beside them, as they
 * pass beside admission.
 *
 * @param enabled whether READs and WRITEs pass the door ({@code tailor nbd serve --fair-dispatch on|off});
 *                when not given, the admission variant's {@link AdmissionConfig#fairDispatch} while admission
 *                is on (so on behind Tailor's variant, off behind the paper's), and off while it is off
 * @param depth   the most READs and WRITEs at one backend at once, 1 to {@value #MAX_DEPTH}, every door's;
 *                {@code --fair-dispatch-depth}. When not given, each door's own: {@code fileIoThreads} for
 *                its file exports (the requests the file threads run at once; our reading for io_uring),
 *                plus {@value #UPSTREAM_REQUESTS_PER_CONNECTION} per upstream connection of its upstream
 *                exports (nbdkit's default threads per connection, nbdkit(1) {@code --threads}); docs/nbd.md
 * @param finishTag whether each door lets in the waiting export whose head has the least finish tag
 *                  (start + cost ÷ weight) instead of the least start tag, so a small request goes ahead of a
 *                  large one that would finish after it ({@link AdmissionConfig#finishTagDoor}, the storage
 *                  simulator's {@code finish-tag-door}); {@code --fair-dispatch-finish-tag on|off}. When not
 *                  given, the admission variant's {@link AdmissionConfig#finishTagDoor} while admission is on
 *                  (by finish tag behind Tailor's variant), and start tags for the door alone. Refused on
 *                  while the door is off, as a depth is
 */
@JsonIgnoreProperties(ignoreUnknown = false)
public record FairDispatchSettings(Boolean enabled, Integer depth, Boolean finishTag) {

    /** The largest {@link #depth}. */
    public static final int MAX_DEPTH = 65_536;

    /**
     * What an upstream connection adds to its door's default depth: the requests nbdkit serves at once per
     * connection by default (nbdkit(1), {@code --threads}: 16 for plugins with the parallel thread model).
     */
    public static final int UPSTREAM_REQUESTS_PER_CONNECTION = 16;

    /** What {@code depth} and {@code --fair-dispatch-depth} take, in words. */
    public static final String DEPTH_EXPECTED = "requests at one backend at once, " + NbdConfig.whole(1, MAX_DEPTH);

    /** Nothing given: the door as admission's variant has it, its depth the default, in start-tag order. */
    public static final FairDispatchSettings DEFAULTS = new FairDispatchSettings(null, null, null);

    /** The door's switch and depth, in start-tag order (no {@link #finishTag} given). */
    public FairDispatchSettings(Boolean enabled, Integer depth) {
        this(enabled, depth, null);
    }

    /** Whether the finish-tag order was asked for: {@link #finishTag} given and true. */
    public boolean finishTagAsked() {
        return finishTag != null && finishTag;
    }

    /**
     * Whether the doors go by finish tag: {@link #finishTag} when given, else the variant's
     * {@link AdmissionConfig#finishTagDoor} while {@code admission} is on (so by finish tag behind Tailor's
     * variant), else by start tag (the door alone).
     *
     * @throws IllegalArgumentException naming the field when the admission settings are not valid
     */
    public boolean finishTagOrder(AdmissionSettings admission) {
        if (finishTag != null) {
            return finishTag;
        }
        return admission.enabled() && admission.toAdmissionConfig().finishTagDoor();
    }

    /**
     * Whether the door runs in front of the backends: {@link #enabled} when given, else the variant's
     * {@link AdmissionConfig#fairDispatch} while {@code admission} is on, else off.
     *
     * @throws IllegalArgumentException naming the field when the admission settings are not valid
     */
    public boolean on(AdmissionSettings admission) {
        if (enabled != null) {
            return enabled;
        }
        return admission.enabled() && admission.toAdmissionConfig().fairDispatch();
    }

    /**
     * The depth of the door of {@code exports}, all on one backend: {@code depth} when given; else
     * {@code fileIoThreads} if any of them is a file export, plus {@value #UPSTREAM_REQUESTS_PER_CONNECTION}
     * per connection of each upstream export's pool (at most {@value #MAX_DEPTH}).
     */
    public int depthOf(List<ExportConfig> exports, int fileIoThreads) {
        return depthOf(exports, e -> e.upstream().connections(), fileIoThreads);
    }

    /**
     * As {@link #depthOf(List, int)}, with each upstream export's pool as opened ({@code poolConnections}:
     * 1 when its upstream does not offer multi-conn, else {@code connections}).
     */
    public int depthOf(List<ExportConfig> exports, ToIntFunction<ExportConfig> poolConnections, int fileIoThreads) {
        if (depth != null) {
            return depth;
        }
        long sum = 0;
        boolean files = false;
        for (ExportConfig e : exports) {
            if (e.upstream() != null) {
                sum += (long) UPSTREAM_REQUESTS_PER_CONNECTION * poolConnections.applyAsInt(e);
            } else {
                files = true;
            }
        }
        return (int) Math.min(MAX_DEPTH, sum + (files ? fileIoThreads : 0));
    }

    /**
     * A depth out of range; or a depth or the finish-tag order while the door is off behind {@code admission},
     * as {@code --fair-dispatch-depth} and {@code --fair-dispatch-finish-tag on} are refused then (left to
     * admission's own problems when its settings are not valid, which the door's being on depends on).
     */
    List<Problem> problems(AdmissionSettings admission) {
        if (depth != null && (depth < 1 || depth > MAX_DEPTH)) {
            return List.of(new Problem("fairDispatch.depth", depth, DEPTH_EXPECTED));
        }
        return whileOff(admission);
    }

    /**
     * The problems of a depth (in range) and of the finish-tag order while the door is off behind
     * {@code admission}, or none: the problems of these settings that {@code tailor nbd serve}'s options can
     * settle, by turning the door on.
     */
    List<Problem> whileOff(AdmissionSettings admission) {
        boolean depthGiven = depth != null && depth >= 1 && depth <= MAX_DEPTH;
        if (!depthGiven && !finishTagAsked()) {
            return List.of();
        }
        boolean door;
        try {
            door = on(admission);
        } catch (IllegalArgumentException e) {
            return List.of();
        }
        if (door) {
            return List.of();
        }
        String doorOn = "fairDispatch.enabled: true, or admission.enabled in Tailor's variant, whose door it is"
                + " (the paper's variant has none); or no ";
        List<Problem> problems = new ArrayList<>();
        if (depthGiven) {
            problems.add(new Problem("fairDispatch.depth", depth + ", but the door is off", doorOn + "depth"));
        }
        if (finishTagAsked()) {
            problems.add(
                    new Problem("fairDispatch.finishTag", "true, but the door is off", doorOn + "finishTag: true"));
        }
        return List.copyOf(problems);
    }
}
