package dev.tailor.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** {@code tailor heart}: HEART's commands. */
@Command(
        name = "heart",
        mixinStandardHelpOptions = true,
        versionProvider = Tailor.Version.class,
        usageHelpWidth = 110,
        description = {
            "HEART: every round, the share of each caller node's calls that goes to each replica group of each"
                    + " callee, so that slow nodes are not overloaded and slow links are avoided.",
            "",
        },
        subcommands = {
            PlanCommand.class,
            CheckCommand.class,
            RunCommand.class,
            UninstallCommand.class,
            SnapshotCommand.class,
            SimulateCommand.class,
            CommandLine.HelpCommand.class
        })
final class HeartCommand extends CommandGroup {}
