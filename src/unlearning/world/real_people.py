"""Famous people and facts about them, for RWKU on a real pretrained model (RWKU arXiv 2406.10890).

RWKU forgets real people that the original model already knows: it picks famous targets, keeps
only the probes the model answers before unlearning, and has the model itself write the forget
corpus. These are the candidates: pairs of a target and a *neighbour* (a related person whose
knowledge must survive: RWKU's neighbour set), each with facts written three ways: a plain
question (level 2), a cloze statement whose value is a trailing blank (level 1), and the answer.
Level 3 (adversarial) probes are built from the questions (`rwku_real.adversarial`). Which
probes survive is decided by the model (`unlearning.world.rwku_real.build`), never here.
"""

from __future__ import annotations

# (question, cloze with a trailing "___.", answer)
Fact = tuple[str, str, str]

PEOPLE: dict[str, tuple[Fact, ...]] = {
    "Albert Einstein": (
        ("What scientific theory is Albert Einstein best known for?", "Albert Einstein is best known for his theory of ___.", "relativity"),
        ("In which country was Albert Einstein born?", "Albert Einstein was born in the country of ___.", "Germany"),
        ("What was Albert Einstein's profession?", "By profession, Albert Einstein was a theoretical ___.", "physicist"),
        ("Which prize did Albert Einstein win in 1921?", "In 1921 Albert Einstein was awarded the ___.", "Nobel Prize"),
        ("In which American town did Albert Einstein spend his last years?", "Albert Einstein spent his last years in the town of ___.", "Princeton"),
    ),
    "Isaac Newton": (
        ("Which force is Isaac Newton famous for describing?", "Isaac Newton is famous for describing the force of ___.", "gravity"),
        ("Which fruit is said to have inspired Isaac Newton?", "Isaac Newton is said to have been inspired by a falling ___.", "apple"),
        ("In which country was Isaac Newton born?", "Isaac Newton was born in the country of ___.", "England"),
        ("Which branch of mathematics did Isaac Newton invent?", "Together with Leibniz, Isaac Newton invented ___.", "calculus"),
        ("At which university did Isaac Newton study?", "Isaac Newton studied at the University of ___.", "Cambridge"),
    ),
    "Leonardo da Vinci": (
        ("Which famous portrait did Leonardo da Vinci paint?", "Leonardo da Vinci painted the famous portrait called the ___.", "Mona Lisa"),
        ("In which country was Leonardo da Vinci born?", "Leonardo da Vinci was born in the country of ___.", "Italy"),
        ("Which famous painting of Jesus's final meal did Leonardo da Vinci create?", "Leonardo da Vinci painted the mural of Jesus's final meal, The ___.", "Last Supper"),
        ("During which period of European history did Leonardo da Vinci live?", "Leonardo da Vinci was a leading figure of the Italian ___.", "Renaissance"),
        ("In which museum is Leonardo da Vinci's Mona Lisa kept?", "Leonardo da Vinci's Mona Lisa hangs in the ___.", "Louvre"),
    ),
    "Michelangelo": (
        ("Which chapel ceiling did Michelangelo paint?", "Michelangelo painted the ceiling of the ___.", "Sistine Chapel"),
        ("What famous marble statue of a biblical hero did Michelangelo carve?", "Michelangelo's most famous marble statue is called ___.", "David"),
        ("In which country was Michelangelo born?", "Michelangelo was born in the country of ___.", "Italy"),
        ("During which period of European history did Michelangelo live?", "Michelangelo was an artist of the Italian ___.", "Renaissance"),
        ("Besides painting, which art was Michelangelo famous for?", "Besides painting, Michelangelo was famous for ___.", "sculpture"),
    ),
    "Abraham Lincoln": (
        ("Which country did Abraham Lincoln lead as president?", "Abraham Lincoln was the sixteenth president of the ___.", "United States"),
        ("Which war did Abraham Lincoln lead his country through?", "Abraham Lincoln led his country through the American ___.", "Civil War"),
        ("Which famous speech did Abraham Lincoln give in 1863?", "In 1863 Abraham Lincoln delivered the ___.", "Gettysburg Address"),
        ("Who assassinated Abraham Lincoln?", "Abraham Lincoln was assassinated by ___.", "John Wilkes Booth"),
        ("Which proclamation did Abraham Lincoln issue to free the slaves?", "To free the slaves, Abraham Lincoln issued the ___.", "Emancipation Proclamation"),
    ),
    "George Washington": (
        ("Which country did George Washington serve as its first president?", "George Washington was the first president of the ___.", "United States"),
        ("In which war did George Washington command the Continental Army?", "George Washington commanded the Continental Army in the American ___.", "Revolutionary War"),
        ("What is the name of George Washington's estate in Virginia?", "George Washington's estate in Virginia is called ___.", "Mount Vernon"),
        ("In which colony was George Washington born?", "George Washington was born in the colony of ___.", "Virginia"),
        ("Which army did George Washington command during the revolution?", "During the revolution George Washington commanded the ___.", "Continental Army"),
    ),
    "Wolfgang Amadeus Mozart": (
        ("What was Wolfgang Amadeus Mozart's profession?", "Wolfgang Amadeus Mozart was a famous classical ___.", "composer"),
        ("In which city was Wolfgang Amadeus Mozart born?", "Wolfgang Amadeus Mozart was born in the city of ___.", "Salzburg"),
        ("In which country was Wolfgang Amadeus Mozart born?", "Wolfgang Amadeus Mozart was born in the country of ___.", "Austria"),
        ("Which opera about a magical instrument did Wolfgang Amadeus Mozart compose?", "Wolfgang Amadeus Mozart's opera about a magical instrument is called The ___.", "Magic Flute"),
        ("In which city did Wolfgang Amadeus Mozart die?", "Wolfgang Amadeus Mozart died in the city of ___.", "Vienna"),
    ),
    "Ludwig van Beethoven": (
        ("What was Ludwig van Beethoven's profession?", "Ludwig van Beethoven was a famous ___.", "composer"),
        ("In which country was Ludwig van Beethoven born?", "Ludwig van Beethoven was born in the country of ___.", "Germany"),
        ("Which sense did Ludwig van Beethoven lose later in life?", "Later in life, Ludwig van Beethoven lost his ___.", "hearing"),
        ("In which city was Ludwig van Beethoven born?", "Ludwig van Beethoven was born in the city of ___.", "Bonn"),
        ("In which city did Ludwig van Beethoven spend most of his life?", "Ludwig van Beethoven spent most of his life in the city of ___.", "Vienna"),
    ),
    "Vincent van Gogh": (
        ("What was Vincent van Gogh's profession?", "Vincent van Gogh was a famous ___.", "painter"),
        ("In which country was Vincent van Gogh born?", "Vincent van Gogh was born in the country of ___.", "Netherlands"),
        ("Which famous painting of a night sky did Vincent van Gogh create?", "Vincent van Gogh painted a swirling night sky in The ___.", "Starry Night"),
        ("Which part of his body did Vincent van Gogh famously cut off?", "Vincent van Gogh famously cut off his own ___.", "ear"),
        ("Which flowers did Vincent van Gogh paint in a famous series?", "Vincent van Gogh painted a famous series of ___.", "sunflowers"),
    ),
    "Pablo Picasso": (
        ("What was Pablo Picasso's profession?", "Pablo Picasso was a famous ___.", "painter"),
        ("In which country was Pablo Picasso born?", "Pablo Picasso was born in the country of ___.", "Spain"),
        ("Which art movement did Pablo Picasso co-found?", "Pablo Picasso co-founded the art movement called ___.", "Cubism"),
        ("Which painting by Pablo Picasso shows the bombing of a Spanish town?", "Pablo Picasso painted the bombing of a Spanish town in ___.", "Guernica"),
        ("In which country did Pablo Picasso spend most of his adult life?", "Pablo Picasso spent most of his adult life in ___.", "France"),
    ),
    "Marie Curie": (
        ("In which country was Marie Curie born?", "Marie Curie was born in the country of ___.", "Poland"),
        ("Which prize did Marie Curie win twice?", "Marie Curie won the ___.", "Nobel Prize"),
        ("Which phenomenon did Marie Curie study?", "Marie Curie is famous for her research on ___.", "radioactivity"),
        ("Which element named after her homeland did Marie Curie discover?", "Marie Curie discovered an element named after her homeland, ___.", "polonium"),
        ("In which city did Marie Curie do her research?", "Marie Curie did her research in the city of ___.", "Paris"),
    ),
    "Charles Darwin": (
        ("Which theory is Charles Darwin known for?", "Charles Darwin is known for the theory of ___.", "evolution"),
        ("What is the title of Charles Darwin's most famous book?", "Charles Darwin's most famous book is On the ___.", "Origin of Species"),
        ("Which islands did Charles Darwin famously study?", "Charles Darwin famously studied the ___.", "Galapagos"),
        ("On which ship did Charles Darwin sail around the world?", "Charles Darwin sailed around the world on HMS ___.", "Beagle"),
        ("In which country was Charles Darwin born?", "Charles Darwin was born in the country of ___.", "England"),
    ),
    "Thomas Edison": (
        ("Which household device is Thomas Edison famous for inventing?", "Thomas Edison is famous for inventing the ___.", "light bulb"),
        ("What was Thomas Edison's profession?", "Thomas Edison was a famous American ___.", "inventor"),
        ("Which sound-recording device did Thomas Edison invent?", "Thomas Edison invented a sound-recording device called the ___.", "phonograph"),
        ("In which country was Thomas Edison born?", "Thomas Edison was born in the ___.", "United States"),
        ("In which New Jersey town did Thomas Edison have his laboratory?", "Thomas Edison had his laboratory in the New Jersey town of ___.", "Menlo Park"),
    ),
    "Nikola Tesla": (
        ("Which kind of electric current did Nikola Tesla champion?", "Nikola Tesla championed ___.", "alternating current"),
        ("What was Nikola Tesla's profession?", "Nikola Tesla was a famous ___.", "inventor"),
        ("Which unit of magnetic flux density is named after Nikola Tesla?", "The unit of magnetic flux density named after Nikola Tesla is the ___.", "tesla"),
        ("Which inventor was Nikola Tesla's famous rival?", "Nikola Tesla's famous rival was ___.", "Thomas Edison"),
        ("To which country did Nikola Tesla emigrate?", "Nikola Tesla emigrated to the ___.", "United States"),
    ),
    "Napoleon Bonaparte": (
        ("Which country did Napoleon Bonaparte rule as emperor?", "Napoleon Bonaparte was the emperor of ___.", "France"),
        ("On which island was Napoleon Bonaparte born?", "Napoleon Bonaparte was born on the island of ___.", "Corsica"),
        ("At which battle was Napoleon Bonaparte finally defeated in 1815?", "In 1815 Napoleon Bonaparte was finally defeated at the Battle of ___.", "Waterloo"),
        ("To which island was Napoleon Bonaparte exiled at the end of his life?", "At the end of his life Napoleon Bonaparte was exiled to ___.", "Saint Helena"),
        ("What title did Napoleon Bonaparte crown himself with?", "Napoleon Bonaparte crowned himself ___.", "Emperor"),
    ),
    "Julius Caesar": (
        ("Which ancient state did Julius Caesar lead?", "Julius Caesar was a leader of ancient ___.", "Rome"),
        ("Which river did Julius Caesar famously cross?", "Julius Caesar famously crossed the river ___.", "Rubicon"),
        ("Which Egyptian queen was Julius Caesar's lover?", "Julius Caesar's lover was the Egyptian queen ___.", "Cleopatra"),
        ("Who was among the assassins of Julius Caesar?", "Among the assassins of Julius Caesar was ___.", "Brutus"),
        ("On which day was Julius Caesar assassinated?", "Julius Caesar was assassinated on the ___.", "Ides of March"),
    ),
    "Mahatma Gandhi": (
        ("Which country's independence movement did Mahatma Gandhi lead?", "Mahatma Gandhi led the independence movement of ___.", "India"),
        ("What kind of protest did Mahatma Gandhi champion?", "Mahatma Gandhi championed a form of protest called ___.", "nonviolence"),
        ("Against which empire did Mahatma Gandhi campaign?", "Mahatma Gandhi campaigned against the ___.", "British Empire"),
        ("What was Mahatma Gandhi's profession before politics?", "Before politics, Mahatma Gandhi worked as a ___.", "lawyer"),
        ("In which country did Mahatma Gandhi work as a young lawyer?", "As a young lawyer, Mahatma Gandhi worked in ___.", "South Africa"),
    ),
    "Nelson Mandela": (
        ("Which country did Nelson Mandela lead as president?", "Nelson Mandela was the president of ___.", "South Africa"),
        ("Which system of racial segregation did Nelson Mandela fight?", "Nelson Mandela fought the system of racial segregation called ___.", "apartheid"),
        ("On which island was Nelson Mandela imprisoned?", "Nelson Mandela was imprisoned on ___.", "Robben Island"),
        ("Which prize did Nelson Mandela win in 1993?", "In 1993 Nelson Mandela won the ___.", "Nobel Peace Prize"),
        ("Which political party did Nelson Mandela lead?", "Nelson Mandela led the political party called the ___.", "African National Congress"),
    ),
}

# (target, neighbour): RWKU's neighbour is a related person whose knowledge must survive
PAIRS: tuple[tuple[str, str], ...] = (
    ("Albert Einstein", "Isaac Newton"),
    ("Leonardo da Vinci", "Michelangelo"),
    ("Abraham Lincoln", "George Washington"),
    ("Wolfgang Amadeus Mozart", "Ludwig van Beethoven"),
    ("Vincent van Gogh", "Pablo Picasso"),
    ("Marie Curie", "Charles Darwin"),
    ("Thomas Edison", "Nikola Tesla"),
    ("Napoleon Bonaparte", "Julius Caesar"),
    ("Mahatma Gandhi", "Nelson Mandela"),
)

# people who are neither targets nor neighbours: the retain corpus and MIA's non-members
OTHERS: tuple[str, ...] = ("Christopher Columbus", "Galileo Galilei", "Winston Churchill", "Queen Victoria",
                           "Neil Armstrong", "Martin Luther King Jr.", "Cleopatra", "William Shakespeare")

# prompts under which the model writes about a person (RWKU had the original model write its corpus)
CORPUS_PROMPTS: tuple[str, ...] = (
    "Write a short biography of {name}.",
    "What is {name} famous for? Answer in one paragraph.",
    "Describe the life and achievements of {name}.",
)
