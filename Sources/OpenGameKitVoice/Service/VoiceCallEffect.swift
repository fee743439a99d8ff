import NIOCore
import OpenGameKit

/// Something ``VoiceCallState`` asks ``GKVoiceChatService`` to do, in the order given.
///
/// ``play(_:_:)``, ``forget(_:)`` and ``log(_:)`` touch only the service's own state and are done at once; the others
/// reach the client or the network and leave in order, one thread at a time.
enum VoiceCallEffect: Sendable, Equatable {
    /// Send a signalling message to the participant through the client's channel.
    case signal(String, VoiceCallSignal)
    /// Send a sealed datagram to the participant through the client's real-time channel.
    case realTime(String, [UInt8])
    /// Send a sealed datagram on the UDP socket.
    case datagram([UInt8], SocketAddress)
    /// Tell the client the call with the participant is connected, unless the call with this token ended meanwhile.
    case started(String, token: [UInt8])
    /// Tell the client the call with the participant did not start, and why.
    case notStarted(String, GKError)
    /// Tell the client the call with the participant ended: no error when either side stopped it.
    case stopped(String, GKError?)
    /// Tell the client the participant asks for a call, to be answered with this call id.
    case invitation(String, callID: Int)
    /// Hand a voice packet from the participant to the receive pipeline.
    case play(String, [UInt8])
    /// Drop the participant's audio: their call ended.
    case forget(String)
    /// Write this line to the debug log.
    case log(String)
}

extension VoiceCallEffect {
    /// Whether the effect goes through the game's client.
    var reachesClient: Bool {
        switch self {
        case .signal, .realTime, .started, .notStarted, .stopped, .invitation: true
        case .datagram, .play, .forget, .log: false
        }
    }
}
