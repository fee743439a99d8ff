/// The kinds of connection a ``GKPeerPickerController`` offers.
public struct GKPeerPickerConnectionType: OptionSet, Sendable, Hashable {
    /// The raw bits.
    public let rawValue: UInt

    /// Creates a set from raw bits.
    public init(rawValue: UInt) {
        self.rawValue = rawValue
    }

    /// Play over the internet; the picker hands control back to the app.
    public static let online = GKPeerPickerConnectionType(rawValue: 1 << 0)
    /// Play with peers on the local network, found with mDNS/DNS-SD.
    public static let nearby = GKPeerPickerConnectionType(rawValue: 1 << 1)
}
