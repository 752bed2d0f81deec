/**
 * The server's configuration: the records ({@link dev.tailor.nbd.config.NbdConfig}: listen address, threads
 * and the checks across sections; a record per section with its defaults and checks: {@link
 * dev.tailor.nbd.config.Limits}, {@link dev.tailor.nbd.config.ExportConfig}, {@link
 * dev.tailor.nbd.config.AdmissionSettings}, {@link dev.tailor.nbd.config.LoopSettings}, {@link
 * dev.tailor.nbd.config.TlsSettings}, {@link dev.tailor.nbd.config.FairDispatchSettings}), read strictly
 * from YAML ({@link dev.tailor.nbd.config.NbdConfigFiles},
 * its structure checked by {@link dev.tailor.nbd.config.ConfigShape}), sizes as written by people ({@link
 * dev.tailor.nbd.config.ByteSize}), the background work's settings ({@link
 * dev.tailor.nbd.config.BackgroundSettings}), and {@code tailor nbd serve}'s options over a config file
 * ({@link dev.tailor.nbd.config.ServeOptions}).
 *
 * <p>Depends on {@code dev.tailor.nbd.protocol} only, never on the backends or the server: its checks are
 * of the settings' shape (a field's value, a file there and readable); what needs the server, such as
 * loading the TLS credentials, the server checks at start.
 *
 * <p>Source: docs/nbd.md, "Configuration" and "Limits"; the protocol's own bounds (string lengths,
 * block sizes) from doc/proto.md of the NetworkBlockDevice project, "Conventions" and "Block size
 * constraints".
 */
package dev.tailor.nbd.config;
