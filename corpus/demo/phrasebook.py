"""The wording the demo corpus is written in: paragraph variants per section kind.

Placeholders: {company}, {topic}. Every number, name and limit in the corpus comes from the
spec, never from here: a phrase with a digit could contradict a declared fact, so the tests
forbid digits in this module's strings. They also keep abstain-question terms out of it.
"""

from __future__ import annotations

DOC_INTRO: tuple[str, ...] = (
    "This page covers {topic} in {company}. It explains how things behave by default, which settings you can "
    "change, and what to check when something does not look right. Each section stands on its own, so feel "
    "free to jump straight to the part you need.",
    "Use this guide whenever you work with {topic}. It is written both for the people who set {company} up and "
    "for the people who support it day to day, and it ties each idea to the concrete setting or value you "
    "will meet in the product.",
    "Everything you need to know about {topic} is collected here. We begin with how it works, move on to the "
    "practical details, and finish with the situations our support team hears about most often.",
    "{company} takes care of most of the work around {topic}, but a few decisions remain yours. This article "
    "describes those decisions, the defaults that apply when you make none, and the limits that hold no "
    "matter how your account is configured.",
    "This reference describes {topic}. Read it from top to bottom when you first set things up; later on, the "
    "headings make it easy to find one specific value again without rereading the whole page.",
    "Questions about {topic} come up regularly, so this page gathers the answers in one place. Where the "
    "behaviour depends on your plan or on account settings, the text says so explicitly.",
)

DOC_INTRO_SECOND: tuple[str, ...] = (
    "If you are new to {company}, skim the headings first to see what is covered, then come back to the "
    "sections that matter for your setup. Developers and support leads tend to need different parts of it.",
    "The page is kept in step with the product. When a value changes, the changelog announces it and this "
    "text is updated, so you do not have to piece the current state together from old announcements.",
    "Nothing here requires a developer unless a section says so; most of it can be handled by whoever "
    "administers your {company} account.",
    "We wrote it with the questions from real support conversations in mind, so the answers are specific "
    "rather than general advice about {topic}.",
    "Links to related pages are left out on purpose: each page is meant to answer its own questions without "
    "sending you elsewhere.",
    "Keep in mind that your plan can change what is available to you. Where that is the case, the relevant "
    "sentence names the plan.",
)

OPENERS: dict[str, tuple[str, ...]] = {
    "overview": (
        "Before you change any settings, it helps to have a clear picture of how {company} approaches {topic}. "
        "The short version follows; later sections go into the practical detail.",
        "At a high level, {company} tries to make {topic} predictable: the same inputs always lead to the same "
        "result, and the values that matter are written down rather than hidden in the interface.",
        "Most teams never need to think hard about {topic}, because the defaults suit the common case. It is "
        "still worth knowing what those defaults are, since they shape what your own customers experience.",
        "Here is the big picture before the details. The points below summarise what happens with {topic} and "
        "which parts of it you control.",
        "The way {company} deals with {topic} follows a few simple rules. Knowing them makes the rest of this "
        "page, and most support conversations on the subject, much easier to follow.",
        "In short, this part explains what to expect from {company} when it comes to {topic}, and why it was "
        "designed that way.",
    ),
    "steps": (
        "Follow these steps in order. Each one takes only a few minutes, and you can stop halfway and pick up "
        "again later without losing progress.",
        "The procedure below assumes you are signed in with an administrator account. Colleagues with narrower "
        "permissions may not see every option mentioned here.",
        "Here is the sequence we recommend. It is the same flow our onboarding specialists walk through when "
        "they help a new customer with {topic}.",
        "You can do this from the dashboard or programmatically; the dashboard route is described here because "
        "it shows every option on screen.",
        "To get this done, work through the list below. If one step fails, do not skip ahead, because the later "
        "steps rely on the earlier ones.",
        "The steps are short, but their order matters, so take them one at a time.",
    ),
    "reference": (
        "The values below are the ones that apply today. They are identical for every account unless a "
        "sentence says otherwise, and they are the same in the dashboard and through the API.",
        "For quick lookup, the key details are listed here. They are the facts you are most likely to need while "
        "configuring {topic}, answering a customer, or checking why something behaved the way it did.",
        "These are the concrete numbers and names you will need when working with {topic}. They rarely change, "
        "and when they do, the change is announced well in advance.",
        "The following details are the ones customers most often ask our support team to confirm, so we keep them "
        "together in one place instead of scattering them across several pages.",
        "Keep this list at hand when you configure anything related to {topic}. Each entry is phrased so that it "
        "can be checked against what you see in your own account.",
        "Below is the reference information, kept deliberately short. Each line states one thing, so you can "
        "copy it into a runbook or a reply to a customer without rewording it.",
    ),
    "notes": (
        "A few practical remarks that tend to save people time. None of them is complicated, but each one has "
        "tripped up at least some teams that set up {topic} for the first time.",
        "Some details are easy to miss the first time around. They do not show up in the main screens, and they "
        "only matter in particular situations, which is exactly when you will be glad to know them.",
        "This is where the finer points live. If you only read one part of this page closely, the remarks below "
        "are a good candidate, because they answer the questions that come up after launch.",
        "Some things deserve to be spelled out, because they surprise people who are used to other tools. The "
        "behaviour is deliberate, and the reasoning is given where it helps.",
        "Good to know before you rely on this in day-to-day work. These are the practical consequences of how "
        "{company} handles {topic}, in plain terms.",
        "Beyond the basics, keep the following in mind. The points are short, and each is independent of the "
        "others, so read whichever ones apply to your situation.",
    ),
    "troubleshooting": (
        "When something goes wrong with {topic}, start with the checks below. They cover the large majority of "
        "cases we see in support.",
        "Problems here usually have a simple cause. Work through the following before you open a ticket; in our "
        "experience it resolves most cases within a few minutes.",
        "If what you observe does not match the documentation, these are the first things to verify. They are "
        "ordered from the most common cause to the least common one.",
        "Most issues in this area come down to configuration rather than an outage on our side. A careful look "
        "at the settings involved in {topic} usually reveals the culprit.",
        "Here is how to diagnose the most common failures. Each item describes what you will see, what it means, "
        "and what to do about it.",
        "Before you escalate, collect the details below; they make any investigation much faster and spare you "
        "a round of follow-up questions from our team.",
    ),
}

# Follows the declared sentences of a section; ties them back to the section's own subject.
MIDDLES: dict[str, tuple[str, ...]] = {
    "overview": (
        "Everything under \u201c{heading}\u201d is the foundation for the rest of this page, so it is worth "
        "getting right before you tune anything else.",
        "This behaviour is the same in every region and for every plan, which keeps {topic} consistent for "
        "your customers wherever they are.",
        "We chose this design because it keeps {topic} easy to reason about, even as your volume grows.",
        "Understanding \u201c{heading}\u201d also makes the error messages you may see later much easier to "
        "interpret.",
        "If you come from another provider, expect some differences here; the terms may be familiar while the "
        "defaults are not.",
        "Support agents refer to this part of the documentation often, so you can quote it when you talk to us.",
    ),
    "steps": (
        "You can repeat these steps as often as you like, and nothing you do here affects data that already "
        "exists in your account.",
        "If your organisation requires a review for configuration changes, share these steps with the reviewer "
        "before you begin.",
        "Everything described under \u201c{heading}\u201d can also be done by a teammate with the same "
        "permissions, so it does not depend on a single person.",
        "Take a moment to check each result as you go; catching a typo early is much easier than hunting for "
        "it later.",
        "Most people complete this in one sitting, and the whole flow is safe to try in a test environment "
        "first.",
        "These steps change only the setting in question and leave everything else about {topic} untouched.",
    ),
    "reference": (
        "The entries above are the ones that matter most for {topic}; other values are rarely relevant in "
        "practice.",
        "Where one of these values can be changed, the entry itself names the setting; otherwise it is fixed for "
        "everyone.",
        "When you quote one of these details to a colleague, mention the section \u201c{heading}\u201d so "
        "they can find the source.",
        "If you build your own tooling around {topic}, read these values from configuration rather than "
        "hard-coding them, so a future change costs you nothing.",
        "None of these details varies by time of day or by load; they are fixed properties of {company}.",
        "Teams often copy this list into their internal wiki, which is fine as long as someone keeps it current.",
    ),
    "notes": (
        "These points are not obvious from the interface, which is exactly why they are written down here.",
        "Each remark comes from a situation that customers have actually run into with {topic}.",
        "Reading \u201c{heading}\u201d once usually prevents the most common misunderstanding in this area.",
        "If one of these remarks conflicts with an assumption in your own processes, adjust the process rather "
        "than working around {company}.",
        "They are small details, but they make a real difference to how {topic} feels for your customers.",
        "Where a remark mentions a setting, you will find it in the account settings under the same name.",
    ),
    "troubleshooting": (
        "Each check takes only a moment, and together they rule out the usual suspects.",
        "If \u201c{heading}\u201d describes your situation exactly, the fix above is almost always enough.",
        "Write down what you changed while troubleshooting, so that you can undo anything that turns out to be "
        "unrelated.",
        "Errors in this area are reported with a code and a short message; the code is the part support needs.",
        "Testing again in a clean browser session or from a different network can help separate local issues "
        "from problems with {topic} itself.",
        "Most of the time, the underlying cause is a setting that was changed recently and then forgotten.",
    ),
}

CLOSERS: dict[str, tuple[str, ...]] = {
    "overview": (
        "If your situation does not fit the description above, the sections below cover the exceptions, and "
        "our support team is happy to look at specific cases.",
        "Keep these points in mind as you read on, because the later sections build on them.",
        "None of this requires changes on your side unless you want to override the defaults, and overriding them "
        "is always reversible.",
        "When in doubt, compare what you see in your account with the description here, and ask us about any gap.",
        "The rest of this page turns these principles into concrete settings and steps, starting with the ones "
        "most teams touch first.",
        "Teams that are new to {company} often find it useful to reread this overview after their first weeks "
        "of real traffic.",
    ),
    "steps": (
        "Once you are done, run a small test to confirm everything behaves as expected before you depend on it.",
        "If you manage several environments, repeat the same steps in each one, since settings are not copied "
        "between them automatically.",
        "Changes made this way take effect right away, and they appear in the activity history so teammates "
        "can see who changed what.",
        "That is all there is to it. You can come back to these settings whenever your needs change.",
        "Should a step look different in your account, you may be looking at an older layout; reloading the "
        "page usually brings in the current one.",
        "We suggest noting what you configured, and when, so that the next person who works on {topic} knows "
        "the history.",
    ),
    "reference": (
        "If a value here does not match what you see in your account, contact support with a screenshot; your "
        "contract may include a specific arrangement.",
        "Where a limit is involved, it is enforced automatically and reported clearly, rather than being silently "
        "ignored.",
        "We announce changes to these values in the changelog before they take effect, so subscribing to it is the "
        "easiest way to stay ahead of them.",
        "These details are reviewed regularly and updated whenever the product changes. The page always "
        "reflects the current state, not a planned one.",
        "Bookmark this section if you find yourself looking these values up often, or share it with the "
        "colleagues who answer questions about {topic}.",
        "Your account settings page shows the same values, so you can confirm them there as well.",
    ),
    "notes": (
        "If any of this is unclear for your setup, ask us; we would rather answer a question early than "
        "untangle a misconfiguration later.",
        "These remarks apply to every plan unless a sentence explicitly names one, and they hold in both test and "
        "production environments.",
        "Our support team sees most problems with {topic} come from overlooking exactly these points.",
        "We keep this list short on purpose and only add to it when a detail has caused real trouble.",
        "Feel free to share this section with the colleagues who look after {topic} with you.",
        "None of these points calls for action today, but they are good to have in mind when planning changes.",
    ),
    "troubleshooting": (
        "Still stuck? Open a ticket with the exact error message, the time it happened and any identifiers you "
        "have, and we will take it from there.",
        "Our status page lists any ongoing incident, so check it first when several things fail at once.",
        "If the problem started right after a change on your side, rolling that change back is often the "
        "quickest way to confirm the cause.",
        "Keep a note of what you tried; it saves a round trip when support picks up the case.",
        "When the issue comes and goes, timestamps and identifiers from several occurrences help far more than "
        "a single example.",
        "Problems that persist after these checks are rare, and support treats them with priority.",
    ),
}

CHANGELOG_INTRO: tuple[str, ...] = (
    "This release of {company} brings changes to {topic}. The details are below.",
    "Here is what is new in {company} around {topic}, and what it means for your setup.",
    "We shipped an update to {topic}. Most accounts benefit without doing anything.",
    "{company} now handles {topic} a little differently. This entry summarises the change.",
    "A short update on {topic}, rolled out to every account over the course of the day.",
)

CHANGELOG_OUTRO: tuple[str, ...] = (
    "No action is needed unless a section above says otherwise.",
    "As always, reach out to support if anything behaves unexpectedly after this update.",
    "You can find this entry again at any time in the changelog archive.",
    "Thanks to the customers who asked for this change and helped us test it.",
    "Questions about this release can go to your usual support channel.",
)

TICKET_OPENER: tuple[str, ...] = (
    "Thanks for the detailed report, it made this quick to track down.",
    "Thank you for your patience while we looked into this.",
    "We reproduced the behaviour you described and found the cause.",
    "Good news: nothing is broken on your account, and there is a straightforward fix.",
    "Thanks for reaching out. Here is what happened and how we resolved it.",
)

TICKET_CLOSER: tuple[str, ...] = (
    "We will close this ticket now, but simply reply if the problem comes back.",
    "Let us know if anything else comes up; this conversation stays open for replies.",
    "Since you confirmed the fix works on your side, we are marking this ticket as solved.",
    "We also added a note to your account so that any agent can pick this up quickly next time.",
    "Happy to help further if you have follow-up questions.",
)
