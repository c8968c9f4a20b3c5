/// Which sound-server source a name given to `-D` means, as `pw-record --target` and
/// `parecord -d` take a source's name, and as a person says "the Yeti".
public enum SourceMatch: Sendable, Equatable {
    case found(SoundServerSource)
    /// More than one source fits: the user must say which (a usage error listing these).
    case ambiguous([SoundServerSource])
    case none

    /// The source whose stable name is `query` exactly; else the one whose description contains
    /// `query`, ignoring case (a source whose name is `query` but for case makes it ambiguous). A query that fits a microphone and a monitor means the microphone
    /// ("Blue Yeti" and "Monitor of Blue Yeti"), unless it names the monitor ("monitor of").
    public init(_ query: String, in sources: [SoundServerSource]) {
        if let exact = sources.first(where: { $0.name == query }) {
            self = .found(exact)
            return
        }
        let wanted = query.lowercased()
        guard !wanted.isEmpty else {
            self = .none
            return
        }
        var fits = sources.filter { $0.description.lowercased().contains(wanted) }
        if fits.contains(where: { !$0.isMonitor }) && !wanted.contains("monitor") {
            fits.removeAll(where: \.isMonitor)
        }
        if let exactDescription = fits.first(where: { $0.description.lowercased() == wanted }), fits.count > 1,
           fits.filter({ $0.description.lowercased() == wanted }).count == 1 {
            fits = [exactDescription]
        }
        // A name that differs from the query only in case is not the query, but close enough that
        // a source taken by its description instead would be a surprise: both are offered.
        for named in sources where named.name.lowercased() == wanted && !fits.contains(where: { $0.name == named.name }) {
            fits.append(named)
        }
        switch fits.count {
        case 0: self = .none
        case 1: self = .found(fits[0])
        default: self = .ambiguous(fits)
        }
    }
}
