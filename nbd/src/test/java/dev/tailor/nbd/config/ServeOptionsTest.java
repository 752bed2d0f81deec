package dev.tailor.nbd.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The options over a config file's: the fair dispatch door's (the config and the options refuse a depth alike),
 * admission's variant, and the warning for admission without a budget.
 */
class ServeOptionsTest {

    @TempDir
    Path dir;

    private static ServeOptions options(Path config, String admission, String fairDispatch, String depth) {
        return options(config, admission, fairDispatch, depth, null);
    }

    private static ServeOptions options(
            Path config, String admission, String fairDispatch, String depth, String finishTag) {
        return new ServeOptions(
                config,
                null,
                false,
                null,
                null,
                null,
                null,
                admission,
                null,
                null,
                null,
                null,
                null,
                null,
                null,
                null,
                null,
                null,
                false,
                null,
                null,
                null,
                null,
                fairDispatch,
                depth,
                finishTag);
    }

    private Path config(String fairDispatch) throws Exception {
        return config("nbd.yaml", fairDispatch);
    }

    private Path config(String file, String fairDispatch) throws Exception {
        return Files.writeString(
                dir.resolve(file),
                "admission: {enabled: true, iops: 1000}\n" + fairDispatch
                        + "exports: [{name: d, size: 1MiB, file: d.img}]\n");
    }

    @Test
    void optionsTurningTheConfigsDoorOff_takeItsDepthWithIt() throws Exception {
        Path config = config("fairDispatch: {depth: 4}\n");
        assertThat(options(config, null, null, null).build().settings().fairDispatch())
                .isEqualTo(new FairDispatchSettings(null, 4));
        for (ServeOptions off :
                new ServeOptions[] {options(config, null, "off", null), options(config, "off", null, null)}) {
            NbdConfig settings = off.build().settings();
            assertThat(settings.fairDispatch().on(settings.admission())).isFalse();
            assertThat(settings.fairDispatch().depth()).isNull();
            assertThat(settings.problems()).as("the server starts with them").isEmpty();
        }
    }

    @Test
    void aDepthWithTheDoorOff_isRefusedInTheConfigAsOnTheCommandLine() throws Exception {
        Path config = config("fairDispatch: {enabled: false, depth: 4}\n");
        assertThatThrownBy(() -> options(config, null, null, null).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("fairDispatch.depth: 4, but the door is off (expected: fairDispatch.enabled:"
                        + " true, or admission.enabled in Tailor's variant");
        NbdConfig rescued = options(config, null, "on", null).build().settings();
        assertThat(rescued.fairDispatch())
                .as("--fair-dispatch on turns the config's door on, its depth with it")
                .isEqualTo(new FairDispatchSettings(true, 4));
        Path on = config("fairDispatch: {enabled: true}\n");
        assertThatThrownBy(() -> options(on, null, "off", "4").build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("--fair-dispatch-depth: the door is off (expected: --fair-dispatch on");
    }

    @Test
    void theFinishTagOrder_isTheVariantsByDefault_andTakenFromTheConfigOrTheOption() throws Exception {
        Path plain = config("");
        NbdConfig behindAdmission = options(plain, null, null, null).build().settings();
        assertThat(behindAdmission.fairDispatch().finishTagOrder(behindAdmission.admission()))
                .as("behind Tailor's admission by finish tag, as in the storage simulator")
                .isTrue();
        NbdConfig alone = options(plain, "off", "on", null).build().settings();
        assertThat(alone.fairDispatch().finishTagOrder(alone.admission()))
                .as("the door alone by start tag, as the simulator's fair-dispatch")
                .isFalse();
        NbdConfig paper = NbdConfigFiles.read(Files.writeString(
                dir.resolve("paper.yaml"),
                "admission: {enabled: true, iops: 1000, variant: paper}\nfairDispatch: {enabled: true}\n"
                        + "exports: [{name: d, size: 1MiB, file: d.img}]\n"));
        assertThat(paper.fairDispatch().finishTagOrder(paper.admission()))
                .as("behind the paper's variant, which has no door of its own, by start tag")
                .isFalse();
        Path ordered = config("ordered.yaml", "fairDispatch: {finishTag: true}\n");
        assertThat(NbdConfigFiles.read(ordered).fairDispatch()).isEqualTo(new FairDispatchSettings(null, null, true));
        assertThat(options(ordered, null, null, null).build().settings().fairDispatch())
                .isEqualTo(new FairDispatchSettings(null, null, true));
        assertThat(options(plain, null, null, null, "on").build().settings().fairDispatch())
                .isEqualTo(new FairDispatchSettings(null, null, true));
        assertThat(options(ordered, null, null, null, "off").build().settings().fairDispatch())
                .as("the option over the config")
                .isEqualTo(new FairDispatchSettings(null, null, false));
        assertThatThrownBy(() -> options(plain, null, null, null, "yes").build())
                .hasMessage("--fair-dispatch-finish-tag: \"yes\" (expected: on, the door by finish tag, or off, by"
                        + " start tag)");
        Path bad = config("bad.yaml", "fairDispatch: {finishTag: sometimes}\n");
        assertThatThrownBy(() -> NbdConfigFiles.read(bad))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("fairDispatch.finishTag: \"sometimes\"")
                .hasMessageContaining("at line 2");
    }

    @Test
    void theFinishTagOrderWithTheDoorOff_isRefusedInTheConfigAsOnTheCommandLine() throws Exception {
        Path config = config("fairDispatch: {enabled: false, finishTag: true}\n");
        String refused = config + ": fairDispatch.finishTag: true, but the door is off (expected:"
                + " fairDispatch.enabled: true, or admission.enabled in Tailor's variant, whose door it is (the paper's"
                + " variant has none); or no finishTag: true) at line 2";
        assertThatThrownBy(() -> NbdConfigFiles.read(config))
                .as("the config alone")
                .hasMessage(refused);
        assertThatThrownBy(() -> options(config, null, null, null).build()).hasMessage(refused);
        assertThat(options(config, null, "on", null).build().settings().fairDispatch())
                .as("--fair-dispatch on turns the config's door on, its order with it")
                .isEqualTo(new FairDispatchSettings(true, null, true));
        NbdConfig dropped = options(config("ordered.yaml", "fairDispatch: {finishTag: true}\n"), "off", null, null)
                .build()
                .settings();
        assertThat(dropped.fairDispatch())
                .as("--admission off turns the config's door off, its order with it")
                .isEqualTo(new FairDispatchSettings(null, null, null));
        assertThat(dropped.problems()).isEmpty();
        Path on = config("on.yaml", "fairDispatch: {enabled: true}\n");
        assertThatThrownBy(() -> options(on, null, "off", null, "on").build())
                .hasMessageContaining(
                        "--fair-dispatch-finish-tag: on, but the door is off (expected: --fair-dispatch on");
        assertThat(options(config, null, null, null, "off").build().settings().fairDispatch())
                .as("off needs no door")
                .isEqualTo(new FairDispatchSettings(false, null, false));
    }

    @Test
    void aConfigsDepthWithoutTheDoor_isTakenWhenTheOptionsTurnTheDoorOn_andRefusedWhenNone() throws Exception {
        // Admission off in the config: no door, unless the command line gives one.
        Path config = Files.writeString(
                dir.resolve("door.yaml"), "exports: [{name: d, size: 1MiB, file: d.img}]\nfairDispatch: {depth: 32}\n");
        for (ServeOptions door : new ServeOptions[] {
            options(config, null, "on", null), options(config, "on", null, null), options(config, "off", "on", null)
        }) {
            NbdConfig settings = door.build().settings();
            assertThat(settings.fairDispatch().on(settings.admission())).isTrue();
            assertThat(settings.fairDispatch().depthOf(settings.exports(), settings.fileIoThreads()))
                    .isEqualTo(32);
            assertThat(settings.problems()).as("the server starts with them").isEmpty();
        }
        String refused = config + ": fairDispatch.depth: 32, but the door is off (expected: fairDispatch.enabled:"
                + " true, or admission.enabled in Tailor's variant, whose door it is (the paper's variant has none);"
                + " or no depth) at line 2";
        assertThatThrownBy(() -> NbdConfigFiles.read(config))
                .as("the config alone")
                .hasMessage(refused);
        for (ServeOptions off : new ServeOptions[] {
            options(config, null, null, null), options(config, "off", null, null), options(config, null, "off", null)
        }) {
            assertThatThrownBy(off::build).as("the door still off").hasMessage(refused);
        }
        // With another problem in the file the depth is listed with it, as the config alone has them.
        Path twice = Files.writeString(
                dir.resolve("twice.yaml"),
                "exports: [{name: d, size: 1MiB, file: d.img}]\nfairDispatch: {depth: 32}\neventLoopThreads: 0\n");
        assertThatThrownBy(() -> options(twice, null, "on", null).build())
                .hasMessageContaining("2 problems:")
                .hasMessageContaining("fairDispatch.depth: 32, but the door is off")
                .hasMessageContaining("eventLoopThreads: 0 (expected: a whole number in [1, 1024]) at line 3");
    }

    /** Options over {@code config} (or over {@code --file disk.img} without one) for admission and its budget. */
    private ServeOptions admissionOptions(Path config, String admission, String iops, String mbps, String variant)
            throws Exception {
        Path file = config == null ? Files.write(dir.resolve("disk.img"), new byte[4096]) : null;
        return new ServeOptions(
                config, file, false, null, null, null, null, admission, iops, mbps, variant, null, null, null, null,
                null, null, null, false, null, null, null, null, null, null, null);
    }

    private Path admissionConfig(String admission) throws Exception {
        return Files.writeString(
                dir.resolve("admission.yaml"),
                "admission: " + admission + "\nexports: [{name: d, size: 1MiB, file: d.img}]\n");
    }

    @Test
    void aQcow2FileServedAsRaw_warnsNamingTheFieldTheFormatAndTheConversion() throws Exception {
        // Was: served as raw bytes without a word: a qemu user saw qcow2's header as the disk and wrote over it.
        byte[] qcow2 = new byte[4096];
        System.arraycopy(new byte[] {'Q', 'F', 'I', (byte) 0xfb, 0, 0, 0, 3}, 0, qcow2, 0, 8);
        Path image = Files.write(dir.resolve("vm.qcow2"), qcow2);
        ServeOptions file = new ServeOptions(
                null, image, true, null, null, null, null, null, null, null, null, null, null, null, null, null, null,
                null, false, null, null, null, null, null, null, null);
        assertThat(file.build().warnings())
                .as("read-only: writes are refused, so only what clients read is wrong")
                .containsExactly("--file: " + image + " is a qcow2 image, served read-only as its raw bytes: clients"
                        + " see the qcow2 format, not the disk in it (expected: a raw image;"
                        + " qemu-img convert -O raw " + image + " disk.raw makes one)");
        ServeOptions writable = new ServeOptions(
                null, image, false, null, null, null, null, null, null, null, null, null, null, null, null, null, null,
                null, false, null, null, null, null, null, null, null);
        assertThat(writable.build().warnings())
                .containsExactly("--file: " + image + " is a qcow2 image, served as its raw bytes: clients see the"
                        + " qcow2 format, not the disk in it, and their writes damage it (expected: a raw image;"
                        + " qemu-img convert -O raw " + image + " disk.raw makes one)");
        Path copy = Files.copy(image, dir.resolve("copy.qcow2")); // one export per file
        Path config = Files.writeString(
                dir.resolve("images.yaml"),
                "exports:\n  - {name: a, size: 1MiB, file: a.img}\n  - {name: b, file: vm.qcow2}\n"
                        + "  - {name: c, file: copy.qcow2, readOnly: true}\n");
        assertThat(admissionOptions(config, null, null, null, null).build().warnings())
                .satisfiesExactly(
                        w -> assertThat(w)
                                .startsWith("exports[1].file: " + image + " is a qcow2 image, served as")
                                .contains("their writes damage it"),
                        w -> assertThat(w)
                                .startsWith("exports[2].file: " + copy + " is a qcow2 image, served read-only as")
                                .doesNotContain("writes"));
        Path raw = Files.write(dir.resolve("vm.raw"), new byte[4096]);
        ServeOptions plain = new ServeOptions(
                null, raw, true, null, null, null, null, null, null, null, null, null, null, null, null, null, null,
                null, false, null, null, null, null, null, null, null);
        assertThat(plain.build().warnings()).as("a raw image").isEmpty();
    }

    @Test
    void vhdAndQedImagesMadeByQemuImg_warnLikeTheOtherFormats() throws Exception {
        // Was: only qcow2, VMDK and VHDX were told; a VHD (qemu's vpc, its cookie in a footer) or QED was
        // served as raw bytes without a word.
        Path qemuImg = dev.tailor.testkit.Tools.require("qemu-img", "qemu-utils");
        String[][] made = {
            {"dynamic.vhd", "VHD", "-f", "vpc"},
            {"fixed.vhd", "VHD", "-f", "vpc", "-o", "subformat=fixed"},
            {"disk.qed", "QED", "-f", "qed"},
        };
        for (String[] m : made) {
            Path image = dir.resolve(m[0]);
            List<String> command = new ArrayList<>(List.of(qemuImg.toString(), "create", "-q"));
            command.addAll(List.of(m).subList(2, m.length));
            command.addAll(List.of(image.toString(), "1M"));
            Process process = new ProcessBuilder(command)
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .start();
            assertThat(process.waitFor()).as(String.join(" ", command)).isZero();
            ServeOptions file = new ServeOptions(
                    null, image, false, null, null, null, null, null, null, null, null, null, null, null, null, null,
                    null, null, false, null, null, null, null, null, null, null);
            assertThat(file.build().warnings())
                    .as(m[0])
                    .containsExactly("--file: " + image + " is a " + m[1] + " image, served as its raw bytes: clients"
                            + " see the " + m[1] + " format, not the disk in it, and their writes damage it (expected:"
                            + " a raw image; qemu-img convert -O raw " + image + " disk.raw makes one)");
        }
    }

    @Test
    void baselinesInTheConfigWithAdmissionAndTheDoorOff_warnThatTheyWeighNothing() throws Exception {
        // Was: accepted without a word, while --baseline-iops in that state is refused.
        Path config = Files.writeString(
                dir.resolve("baselines.yaml"),
                "exports:\n"
                        + "  - {name: a, size: 1MiB, file: a.img, baseline: {iops: 100}}\n"
                        + "  - {name: b, size: 1MiB, file: b.img}\n"
                        + "  - {name: c, size: 1MiB, file: c.img, baseline: {iops: 200}}\n");
        assertThat(admissionOptions(config, null, null, null, null).build().warnings())
                .containsExactly("exports[0].baseline, exports[2].baseline: admission and the fair dispatch door are"
                        + " off, so they weigh nothing; turn one on (--admission on or --fair-dispatch on, or"
                        + " admission.enabled or fairDispatch.enabled in the config) for a baseline to mean"
                        + " something");
        assertThat(admissionOptions(config, "on", "50000", null, null).build().warnings())
                .as("admission on")
                .isEmpty();
        // config, file, readOnly; exportName .. tlsCertificates (15); tlsVerifyPeer; maxConnectionsPerAddress ..
        // fileIo (4); fairDispatch on; its depth and order.
        ServeOptions door = new ServeOptions(
                config, null, false, null, null, null, null, null, null, null, null, null, null, null, null, null, null,
                null, false, null, null, null, null, "on", null, null);
        assertThat(door.build().warnings()).as("the door on").isEmpty();
    }

    @Test
    void diskOrderWhereTheGuaranteeIsOff_warnsThatItHasNoEffect() throws Exception {
        // Was: accepted without a word with the paper's variant or the guarantee off, where it does nothing.
        assertThat(admissionWarnings("{enabled: true, iops: 1000, variant: paper, diskOrderAcrossGuarantee: true}"))
                .containsExactly("admission.diskOrderAcrossGuarantee: true has no effect: it orders the baseline"
                        + " guarantee's admissions, and the guarantee is off here (admission.variant: paper); set"
                        + " admission.baselineGuarantee: true for it to apply");
        assertThat(admissionWarnings(
                        "{enabled: true, iops: 1000, baselineGuarantee: false, diskOrderAcrossGuarantee: true}"))
                .singleElement(org.assertj.core.api.InstanceOfAssertFactories.STRING)
                .contains("(admission.baselineGuarantee: false)");
        for (String admission : List.of(
                "{enabled: true, iops: 1000, diskOrderAcrossGuarantee: true}",
                "{enabled: true, iops: 1000, variant: paper, baselineGuarantee: true, diskOrderAcrossGuarantee: true}",
                "{enabled: true, iops: 1000, variant: paper}")) {
            assertThat(admissionWarnings(admission)).as(admission).isEmpty();
        }
    }

    /** The start's warnings for a config whose admission block is {@code admission}. */
    private List<String> admissionWarnings(String admission) throws Exception {
        return admissionOptions(admissionConfig(admission), null, null, null, null)
                .build()
                .warnings();
    }

    @Test
    void admissionWithoutABudget_warnsOfTheDefaultInReadsPerSecondAndHowToSetIt() throws Exception {
        // A new user's disk was held to about 8518 4 KiB reads/s, and only docs/nbd.md said so.
        String warning = "admission is on without a budget: the default budget admits about 8,518 4 KiB reads/s for"
                + " the whole server, and a faster backend is held to it; set the backends' capacity with"
                + " --admission-iops N (and --admission-mbps), or admission.iops in the config (docs/nbd.md,"
                + " Admission)";
        assertThat(admissionOptions(null, "on", null, null, null).build().warnings())
                .containsExactly(warning);
        assertThat(admissionOptions(admissionConfig("{enabled: true}"), null, null, null, null)
                        .build()
                        .warnings())
                .containsExactly(warning);
        assertThat(admissionOptions(admissionConfig("{enabled: false}"), "on", null, null, null)
                        .build()
                        .warnings())
                .containsExactly(warning);

        assertThat(admissionOptions(null, "on", "50000", null, null).build().warnings())
                .isEmpty();
        assertThat(admissionOptions(null, "on", null, "400", null).build().warnings())
                .isEmpty();
        for (String budget :
                new String[] {"iops: 50000", "megabytesPerSecond: 400", "capacityCostUnitsPerSecond: 2e9"}) {
            assertThat(admissionOptions(admissionConfig("{enabled: true, " + budget + "}"), null, null, null, null)
                            .build()
                            .warnings())
                    .as(budget)
                    .isEmpty();
        }
        assertThat(admissionOptions(null, null, null, null, null).build().warnings())
                .as("admission off")
                .isEmpty();
        assertThat(admissionOptions(admissionConfig("{enabled: true}"), "off", null, null, null)
                        .build()
                        .warnings())
                .as("admission turned off")
                .isEmpty();
    }

    @Test
    void admissionQueues_holdWhatClientsMayHaveOutstanding_andASmallerOneInTheConfigWinsWithAWarning()
            throws Exception {
        // Was: admission's own 64 requests a segment, while a connection may have 256 in flight: fio at iodepth 128
        // on one disk (one segment of 32 GiB) had requests answered EIO within seconds.
        NbdConfig options =
                admissionOptions(null, "on", "50000", null, null).build().settings();
        assertThat(options.admission().queueCapacityPerSegment()).as("not set").isNull();
        assertThat(options.admission().toAdmissionConfig(options.limits()).queueCapacityPerSegment())
                .as("maxInFlightRequestsPerConnection 256 × maxConnections 256")
                .isEqualTo(65_536);
        assertThat(queueSetup("{maxInFlightRequestsPerConnection: 32, maxConnections: 4}", "")
                        .settings()
                        .admission()
                        .queueCapacityPerSegment(Limits.builder()
                                .maxInFlightRequestsPerConnection(32)
                                .maxConnections(4)
                                .build()))
                .as("follows the limits")
                .isEqualTo(128);
        for (String enough :
                new String[] {"", ", queueCapacityPerSegment: 65536", ", queueCapacityPerSegment: 70000"}) {
            assertThat(queueSetup("{}", enough).warnings()).as(enough).isEmpty();
        }

        ServeOptions.Setup small = queueSetup("{}", ", queueCapacityPerSegment: 64");
        assertThat(small.settings()
                        .admission()
                        .toAdmissionConfig(small.settings().limits())
                        .queueCapacityPerSegment())
                .as("the config's value wins")
                .isEqualTo(64);
        assertThat(small.warnings())
                .containsExactly("admission.queueCapacityPerSegment: 64 is fewer than the 65,536 requests clients may"
                        + " have outstanding (limits.maxInFlightRequestsPerConnection 256 × limits.maxConnections"
                        + " 256): once 64 requests wait for one segment, a client within those limits has the next"
                        + " answered EIO, which a VM reports as a file system error; leave it out to queue them all,"
                        + " or lower limits.maxInFlightRequestsPerConnection or limits.maxConnections (docs/nbd.md,"
                        + " Admission)");
        assertThat(queueSetup(
                                "{maxInFlightRequestsPerConnection: 16, maxConnections: 4}",
                                ", queueCapacityPerSegment: 64")
                        .warnings())
                .as("64 queues all that 4 connections of 16 can have outstanding")
                .isEmpty();
        assertThat(queueSetup("{maxInFlightRequestsPerConnection: 65536}", "").warnings())
                .singleElement(org.assertj.core.api.InstanceOfAssertFactories.STRING)
                .startsWith("admission.queueCapacityPerSegment: 1,000,000 (the default: admission's largest queue) is"
                        + " fewer than the 16,777,216 requests")
                .endsWith("; lower limits.maxInFlightRequestsPerConnection or limits.maxConnections (docs/nbd.md,"
                        + " Admission)");
        Path off = Files.writeString(
                dir.resolve("off.yaml"),
                "admission: {queueCapacityPerSegment: 1}\nexports: [{name: d, size: 1MiB, file: d.img}]\n");
        assertThat(admissionOptions(off, null, null, null, null).build().warnings())
                .as("admission off: no queue")
                .isEmpty();
    }

    /** The start of a config with {@code limits} and admission on with a budget and {@code more}. */
    private ServeOptions.Setup queueSetup(String limits, String more) throws Exception {
        Path config = Files.writeString(
                dir.resolve("queue.yaml"),
                "limits: " + limits + "\nadmission: {enabled: true, iops: 1000" + more
                        + "}\nexports: [{name: d, size: 1MiB, file: d.img}]\n");
        return admissionOptions(config, null, null, null, null).build();
    }

    @Test
    void admissionVariantWithAdmissionOff_isRefusedAsTheBudgetIs() throws Exception {
        for (String variant : new String[] {"paper", "tailor"}) {
            assertThatThrownBy(() ->
                            admissionOptions(null, null, null, null, variant).build())
                    .as(variant)
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("--admission-variant: admission is off (expected: --admission on, or"
                            + " admission.enabled in the config, for a variant to mean something)");
        }
        assertThatThrownBy(() -> admissionOptions(admissionConfig("{enabled: true}"), "off", null, null, "paper")
                        .build())
                .hasMessageStartingWith("--admission-variant: admission is off");

        assertThat(admissionOptions(null, "on", null, null, "paper")
                        .build()
                        .settings()
                        .admission()
                        .variant())
                .isEqualTo("paper");
        assertThat(admissionOptions(admissionConfig("{enabled: true, iops: 1000}"), null, null, null, "paper")
                        .build()
                        .settings()
                        .admission()
                        .variant())
                .as("the config turns admission on")
                .isEqualTo("paper");
    }
}
