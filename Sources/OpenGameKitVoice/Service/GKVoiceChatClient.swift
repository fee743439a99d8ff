import Foundation

/// What a game gives ``GKVoiceChatService``: its participant id, and a channel to the other participants — a
/// `GKSession`, a `GKMatch`, its own server — that carries the service's signalling data reliably, and optionally its
/// real-time data.
///
/// Only ``participantID()`` and ``voiceChatService(_:send:toParticipantID:)`` are required; the other methods have
/// default implementations (the seed's optional methods). The service calls them on its own threads (the caller's,
/// its network thread, its 20 ms audio thread); hop to the game's queue where needed, and do not block.
public protocol GKVoiceChatClient: AnyObject, Sendable {
    /// This device's participant id, unique among the participants (a `GKSession` peer id, a player id…).
    func participantID() -> String

    /// Delivers `data` to `participantID`'s service, reliably and in order: the receiving game passes it to
    /// ``GKVoiceChatService/receivedData(_:fromParticipantID:)``.
    func voiceChatService(_ service: GKVoiceChatService, send data: Data, toParticipantID participantID: String)

    /// Delivers `data` (one sealed voice datagram, at most 1,319 bytes) to `participantID`'s service as fast as
    /// possible, losses allowed: the receiving game passes it to
    /// ``GKVoiceChatService/receivedRealTimeData(_:fromParticipantID:)``. Used only when no direct UDP path answers
    /// (a firewall, a NAT). The default implementation has no such channel: the call then fails with
    /// `communicationsFailure`.
    func voiceChatService(_ service: GKVoiceChatService, sendRealTimeData data: Data, toParticipantID participantID: String)

    /// The call with `participantID` is connected: voice flows both ways.
    func voiceChatService(_ service: GKVoiceChatService, didStartWithParticipantID participantID: String)

    /// The call with `participantID` did not start; `error` (a `GKError`) says why: `userDenied` when they declined,
    /// `communicationsFailure` when they did not answer or no path carried the voice, `cancelled` when the call was
    /// withdrawn or stopped before it started.
    func voiceChatService(_ service: GKVoiceChatService, didNotStartWithParticipantID participantID: String, error: (any Error)?)

    /// The call with `participantID` ended: `error` nil when either side stopped it, a `GKError`
    /// (`communicationsFailure`) when the other side went silent for ``GKVoiceChatService/Timeouts/silence``.
    func voiceChatService(_ service: GKVoiceChatService, didStopWithParticipantID participantID: String, error: (any Error)?)

    /// `participantID` asks for a call: answer with ``GKVoiceChatService/acceptCallID(_:)`` or
    /// ``GKVoiceChatService/denyCallID(_:)`` within ``GKVoiceChatService/Timeouts/invitation``. The default
    /// implementation accepts at once, as the seed's example expects.
    func voiceChatService(_ service: GKVoiceChatService, didReceiveInvitationFromParticipantID participantID: String, callID: Int)
}

extension GKVoiceChatClient {
    /// No real-time channel: tells the service, which ends the call that needed one with `communicationsFailure`.
    public func voiceChatService(_ service: GKVoiceChatService, sendRealTimeData data: Data, toParticipantID participantID: String) {
        service.clientHasNoRealTimeChannel(for: participantID)
    }

    /// Does nothing.
    public func voiceChatService(_ service: GKVoiceChatService, didStartWithParticipantID participantID: String) {}

    /// Does nothing.
    public func voiceChatService(_ service: GKVoiceChatService, didNotStartWithParticipantID participantID: String, error: (any Error)?) {}

    /// Does nothing.
    public func voiceChatService(_ service: GKVoiceChatService, didStopWithParticipantID participantID: String, error: (any Error)?) {}

    /// Accepts the call.
    public func voiceChatService(_ service: GKVoiceChatService, didReceiveInvitationFromParticipantID participantID: String, callID: Int) {
        try? service.acceptCallID(callID)
    }
}
