package dev.tailor.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * Every command's {@code --help} examples can be pasted into a shell: no example is wrapped by the help's
 * width in the middle of an argument; one that must wrap ends its line with a shell continuation.
 */
class HelpExamplesTest {

    /** A one-line example: {@code Example: tailor ...}, {@code Robustness sweep: ./tailor ...}. */
    private static final Pattern LABELLED = Pattern.compile("^[A-Z][A-Za-z ]{0,40}: (\\./)?tailor [a-z].*");

    @Test
    void everyExampleInEveryCommandsHelp_isWholeOnItsLinesOrContinuedWithABackslash() {
        List<String> examples = new ArrayList<>();
        List<String> broken = new ArrayList<>();
        for (CommandLine command : commands(new CommandLine(new Tailor()))) {
            String name = command.getCommandSpec().qualifiedName();
            int width = command.getCommandSpec().usageMessage().width();
            List<String> lines =
                    command.getUsageMessage(CommandLine.Help.Ansi.OFF).lines().toList();
            boolean inExamples = false;
            boolean continued = false;
            for (String line : lines) {
                boolean example = continued
                        || LABELLED.matcher(line).matches()
                        || inExamples && line.startsWith("  ") && !line.isBlank();
                if (line.isBlank()) {
                    inExamples = false;
                } else if (line.equals("Examples:")) {
                    inExamples = true;
                } else if (inExamples && !line.startsWith("  ")) {
                    broken.add(name + ": not indented like its examples, a wrapped one's rest? \"" + line + "\"");
                }
                continued = example && line.endsWith(" \\");
                if (!example) {
                    continue;
                }
                examples.add(name + ": " + line);
                String text = line.replaceAll("\\s+#.*$", "").stripTrailing(); // before its comment
                if (text.endsWith(",") || text.endsWith("=") || line.length() > width) {
                    broken.add(name + ": \"" + line + "\"");
                }
            }
            for (String source : footerAndDescription(command.getCommandSpec())) {
                if (LABELLED.matcher(source).matches() || source.startsWith("  tailor ")) {
                    if (source.length() > width) {
                        broken.add(name + ": longer than the help's " + width + " columns: \"" + source + "\"");
                    }
                }
            }
        }
        assertThat(examples).as("examples found").hasSizeGreaterThan(20);
        assertThat(examples).as("the storage sweep's example").anyMatch(e -> e.contains("--scenario robustness"));
        assertThat(broken).isEmpty();
    }

    private static List<String> footerAndDescription(CommandLine.Model.CommandSpec spec) {
        List<String> lines = new ArrayList<>(List.of(spec.usageMessage().footer()));
        lines.addAll(List.of(spec.usageMessage().description()));
        return lines;
    }

    private static List<CommandLine> commands(CommandLine root) {
        List<CommandLine> all = new ArrayList<>();
        all.add(root);
        for (CommandLine sub : root.getSubcommands().values()) {
            if (!all.contains(sub)) {
                all.addAll(commands(sub));
            }
        }
        return all;
    }
}
