/// Everything a game hears about its local player — turn-based events and changes to its saves — in one protocol, as
/// GameKit's: an object adopting it registers once (``GKLocalPlayer/register(_:)-(GKLocalPlayerListener)``) and
/// hears both. Every method has a default that does nothing.
public protocol GKLocalPlayerListener: GKTurnBasedEventListener, GKSavedGameListener {}

extension GKLocalPlayer {
    /// Registers `listener` for turn-based events and for changes to the local player's saves (held weakly: keep it
    /// alive while it should hear them).
    public func register(_ listener: any GKLocalPlayerListener) {
        gameCenter.turnBasedListeners.register(listener)
        gameCenter.savedGameListeners.register(listener)
    }

    /// Stops `listener` hearing turn-based events and changes to saves.
    public func unregisterListener(_ listener: any GKLocalPlayerListener) {
        gameCenter.turnBasedListeners.unregister(listener)
        gameCenter.savedGameListeners.unregister(listener)
    }
}
