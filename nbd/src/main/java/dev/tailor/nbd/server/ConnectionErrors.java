package dev.tailor.nbd.server;

import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.DecoderException;
import java.io.IOException;
import javax.net.ssl.SSLException;

/**
 * The last handler of every connection: logs the failure that closed it. A client that vanished
 * (connection reset) is routine and logged at DEBUG; anything else is a bug here and logged at WARNING.
 */
@ChannelHandler.Sharable
final class ConnectionErrors extends ChannelInboundHandlerAdapter {

    static final ConnectionErrors INSTANCE = new ConnectionErrors();

    private static final System.Logger LOG = System.getLogger(ConnectionErrors.class.getName());

    private ConnectionErrors() {}

    /**
     * A phase handler failed: closes the connection and passes the failure on to be logged here; a TLS
     * failure (a failed handshake, a record that is not TLS) on a connection that started TLS is the
     * client's, said once at the handshake event or at DEBUG.
     */
    static void closeAfter(ChannelHandlerContext ctx, Throwable cause, boolean tlsStarted) {
        ctx.close();
        if (tlsStarted
                && (cause instanceof SSLException
                        || cause instanceof DecoderException && cause.getCause() instanceof SSLException)) {
            LOG.log(System.Logger.Level.DEBUG, () -> ctx.channel() + ": closed after a TLS failure: " + cause);
            return;
        }
        ctx.fireExceptionCaught(cause);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        System.Logger.Level level =
                cause instanceof IOException ? System.Logger.Level.DEBUG : System.Logger.Level.WARNING;
        LOG.log(level, () -> ctx.channel() + ": closed after " + cause, cause);
        ctx.close();
    }
}
