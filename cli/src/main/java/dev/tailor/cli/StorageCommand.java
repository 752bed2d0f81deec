package dev.tailor.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** {@code tailor storage}: the storage side — segment admission, simulated for now. */
@Command(
        name = "storage",
        mixinStandardHelpOptions = true,
        versionProvider = Tailor.Version.class,
        usageHelpWidth = 110,
        description = {
            "Burst-aware segment admission for shared block storage: steady segments keep a reserved allowance, a"
                    + " burst may borrow measured headroom once and must repay it.",
            "",
        },
        subcommands = {StorageSimulateCommand.class, CommandLine.HelpCommand.class})
final class StorageCommand extends CommandGroup {}
