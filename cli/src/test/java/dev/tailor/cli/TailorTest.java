package dev.tailor.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import picocli.CommandLine;

/** {@link Tailor}: how a command's unexpected failure is told; a command group run without a subcommand. */
class TailorTest {

    @Test
    void outputCharset_aTerminalThatCannotWriteTheSigns_getsUtf8_othersTheirOwn() {
        // Was: under LC_ALL=C, "burst-microbench ?16" (and "?" in JSON, which is UTF-8 by RFC 8259).
        assertThat(Tailor.outputCharset(java.nio.charset.StandardCharsets.US_ASCII))
                .isEqualTo(java.nio.charset.StandardCharsets.UTF_8);
        assertThat(Tailor.outputCharset(java.nio.charset.StandardCharsets.ISO_8859_1))
                .isEqualTo(java.nio.charset.StandardCharsets.UTF_8);
        assertThat(Tailor.outputCharset(java.nio.charset.StandardCharsets.UTF_8))
                .isEqualTo(java.nio.charset.StandardCharsets.UTF_8);
        assertThat(Tailor.outputCharset(java.nio.charset.StandardCharsets.UTF_16LE))
                .isEqualTo(java.nio.charset.StandardCharsets.UTF_16LE);
    }

    @Test
    void failed_outOfMemoryWrappedInAnother_isOneLineWithAHint_exit1() {
        StringWriter err = new StringWriter();
        int code = Tailor.failed(
                new IllegalStateException(new OutOfMemoryError("Java heap space")), new PrintWriter(err, true));

        assertThat(code).isEqualTo(1);
        assertThat(err.toString().lines()).hasSize(1);
        assertThat(err.toString())
                .startsWith("tailor: out of memory (Java heap space, at most ")
                .contains("smaller rate")
                .contains("TAILOR_JAVA_OPTS=-Xmx")
                .doesNotContain("internal error")
                .doesNotContain("\tat ");
    }

    @Test
    void failed_anyOtherError_isAnInternalErrorWithItsStackTrace() {
        StringWriter err = new StringWriter();
        int code = Tailor.failed(new IllegalStateException("broken"), new PrintWriter(err, true));

        assertThat(code).isEqualTo(1);
        assertThat(err.toString())
                .startsWith("tailor: internal error: java.lang.IllegalStateException: broken")
                .contains("\tat ");
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "''              | tailor: a subcommand is missing (expected: one of demo, heart, storage, nbd, help)",
                "heart           | tailor: heart: a subcommand is missing (expected: one of plan, check, run, uninstall,"
                        + " snapshot, simulate, help)",
                "storage         | tailor: storage: a subcommand is missing (expected: one of simulate, help)",
                "nbd             | tailor: nbd: a subcommand is missing (expected: one of serve, top, experiment, help)",
                "heart snapshot  | tailor: heart snapshot: a subcommand is missing (expected: one of dataset, help)",
                "nbd experiment  | tailor: nbd experiment: a subcommand is missing (expected: one of burst, low-load,"
                        + " help)"
            })
    void commandGroup_withoutSubcommand_isAUsageError_usageOnStderr_exit2(String command, String message) {
        String[] args = command.isEmpty() ? new String[0] : command.split(" ");

        PlanCommandTest.Result result = PlanCommandTest.tailor(args);

        // Was: the usage on standard output and exit 0, as if the command had done its work.
        assertThat(result.exitCode()).isEqualTo(2);
        assertThat(result.out()).isEmpty();
        assertThat(result.err().lines().findFirst()).hasValue(message);
        assertThat(result.err()).contains("Usage: tailor" + (command.isEmpty() ? "" : " " + command) + " [");
        // Asked for, the usage is output and not an error.
        String[] help = java.util.stream.Stream.concat(
                        java.util.Arrays.stream(args), java.util.stream.Stream.of("--help"))
                .toArray(String[]::new);
        PlanCommandTest.Result asked = PlanCommandTest.tailor(help);
        assertThat(asked.exitCode()).isZero();
        assertThat(asked.out()).contains("Usage: tailor");
        assertThat(asked.err()).isEmpty();
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "''              | tailor: unknown command 'bogus' (expected: one of demo, heart, storage, nbd, help)",
                "heart           | tailor: heart: unknown command 'bogus' (expected: one of plan, check, run, uninstall,"
                        + " snapshot, simulate, help)",
                "storage         | tailor: storage: unknown command 'bogus' (expected: one of simulate, help)",
                "nbd             | tailor: nbd: unknown command 'bogus' (expected: one of serve, top, experiment, help)",
                "heart snapshot  | tailor: heart snapshot: unknown command 'bogus' (expected: one of dataset, help)",
                "nbd experiment  | tailor: nbd experiment: unknown command 'bogus' (expected: one of burst, low-load,"
                        + " help)"
            })
    void commandGroup_withAnUnknownSubcommand_orItsHelp_namesTheGroupAndTheChoices_usageOnStderr_exit2(
            String command, String message) {
        for (String word : new String[] {"bogus", "help bogus"}) {
            String[] args = (command.isEmpty() ? word : command + " " + word).split(" ");

            PlanCommandTest.Result result = PlanCommandTest.tailor(args);

            // Was: picocli's bare "Unmatched argument at index 1: 'bogus'" (and for help, "Unknown subcommand
            // 'bogus'."), no group, no choices, no usage.
            assertThat(result.exitCode()).as(word).isEqualTo(2);
            assertThat(result.out()).as(word).isEmpty();
            assertThat(result.err().lines().findFirst()).as(word).hasValue(message);
            assertThat(result.err())
                    .as(word)
                    .contains("Usage: tailor" + (command.isEmpty() ? "" : " " + command) + " [")
                    .doesNotContain("Unmatched argument")
                    .doesNotContain("Unknown subcommand");
        }
    }

    @Test
    void help_ofEveryHeartCommand_saysItsExitCodes() {
        // heart uninstall's help had neither examples nor exit codes, unlike the others.
        for (List<String> command : List.of(
                List.of("heart", "plan"),
                List.of("heart", "check"),
                List.of("heart", "run"),
                List.of("heart", "uninstall"),
                List.of("heart", "simulate"),
                List.of("heart", "snapshot", "dataset"))) {
            List<String> args = new ArrayList<>(command);
            args.add("--help");
            PlanCommandTest.Result help = PlanCommandTest.tailor(args.toArray(String[]::new));
            assertThat(help.exitCode()).as(String.join(" ", command)).isZero();
            assertThat(help.out())
                    .as(String.join(" ", command))
                    .contains("Examples:")
                    .containsPattern("Exit codes: 0 [^\\n]*, 1 [^\\n]*, 2 bad input");
        }
    }

    @Test
    void help_ofAMistypedSubcommand_suggestsTheNearOne_andOfAKnownOne_printsItsUsage() {
        PlanCommandTest.Result mistyped = PlanCommandTest.tailor("heart", "help", "simulat");
        PlanCommandTest.Result known = PlanCommandTest.tailor("heart", "help", "simulate");

        assertThat(mistyped.exitCode()).isEqualTo(2);
        assertThat(mistyped.err())
                .startsWith("tailor: heart: unknown command 'simulat' (expected: one of ")
                .contains("Did you mean: heart simulate");
        assertThat(known.exitCode()).isZero();
        assertThat(known.out()).startsWith("Usage: tailor heart simulate");
        assertThat(known.err()).isEmpty();
    }

    @Test
    void help_ofAnUnknownSubcommand_neitherListsNorSuggestsAHiddenOne() {
        StringWriter err = new StringWriter();
        CommandLine group = new CommandLine(new Group());
        group.addSubcommand("help", new CommandLine.HelpCommand());
        group.setErr(new PrintWriter(err, true));
        group.setParameterExceptionHandler((e, args) -> CommandGroup.unknownSubcommand(e));

        assertThat(group.execute("help", "internl")).isEqualTo(2);
        assertThat(err.toString().lines().takeWhile(l -> !l.startsWith("Usage:")))
                .containsExactly("tailor: group: unknown command 'internl' (expected: one of status, help)");

        err.getBuffer().setLength(0);
        assertThat(group.execute("help", "statu")).isEqualTo(2);
        assertThat(err.toString()).contains("Did you mean: group status?");
    }

    @Test
    void commandGroup_withAMistypedSubcommand_suggestsTheNearOne() {
        PlanCommandTest.Result result = PlanCommandTest.tailor("heart", "simulat");

        assertThat(result.exitCode()).isEqualTo(2);
        assertThat(result.err())
                .startsWith("tailor: heart: unknown command 'simulat' (expected: one of ")
                .contains("Did you mean: heart simulate");
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {"bogus        | ''", "onlineboutiq | ''", "datset       | Did you mean: heart snapshot dataset?"})
    void commandGroup_withAnUnknownSubcommand_suggestsAChoice_neverAnAlias(String word, String suggestion) {
        PlanCommandTest.Result result = PlanCommandTest.tailor("heart", "snapshot", word);

        // Was: "Did you mean: snapshot onlineboutique?" for each of them, the old name of dataset.
        assertThat(result.exitCode()).isEqualTo(2);
        List<String> told =
                result.err().lines().takeWhile(l -> !l.startsWith("Usage:")).toList();
        assertThat(told)
                .containsExactlyElementsOf(Stream.concat(
                                Stream.of("tailor: heart snapshot: unknown command '" + word
                                        + "' (expected: one of dataset, help)"),
                                Stream.of(suggestion).filter(s -> !s.isEmpty()))
                        .toList());
    }

    @Test
    void commandGroup_withAHiddenSubcommand_neitherListsNorSuggestsIt() {
        StringWriter err = new StringWriter();
        CommandLine group = new CommandLine(new Group());
        group.setErr(new PrintWriter(err, true));
        group.setParameterExceptionHandler((e, args) -> CommandGroup.unknownSubcommand(e));

        assertThat(group.execute("internl")).isEqualTo(2);
        assertThat(err.toString().lines().takeWhile(l -> !l.startsWith("Usage:")))
                .containsExactly("tailor: group: unknown command 'internl' (expected: one of status)");

        err.getBuffer().setLength(0);
        assertThat(group.execute()).isEqualTo(2);
        assertThat(err.toString().lines().findFirst())
                .hasValue("tailor: group: a subcommand is missing (expected: one of status)");

        err.getBuffer().setLength(0);
        assertThat(group.execute("statu")).isEqualTo(2);
        assertThat(err.toString()).contains("Did you mean: group status?");
    }

    @CommandLine.Command(
            name = "group",
            subcommands = {Group.Status.class, Group.Internal.class})
    static final class Group extends CommandGroup {

        @CommandLine.Command(name = "status", aliases = "stat")
        static final class Status implements Runnable {
            @Override
            public void run() {}
        }

        @CommandLine.Command(name = "internal", hidden = true)
        static final class Internal implements Runnable {
            @Override
            public void run() {}
        }
    }

    @Test
    void commandGroup_withAnUnknownOption_saysWhatItSaidBefore() {
        PlanCommandTest.Result result = PlanCommandTest.tailor("heart", "--bogus");

        assertThat(result.exitCode()).isEqualTo(2);
        assertThat(result.err()).startsWith("tailor: Unknown option: '--bogus'").contains("Try 'tailor heart --help'.");
    }
}
